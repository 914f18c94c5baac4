"""Tool answers carry resource_link blocks beside their text (step 8 on), over real HTTP
on a copy of the sample vault: create_note links the note it made, search_vault each
note it found, once, in order, daily_note the day's note (where the step has that
tool); each link opens with resources/read. A session of a revision before 2025-06-18
gets the text alone; the stateless era gets the links. Each distinct copy of
resource_links.py is run, and step 10."""
import json
import shutil

import pytest

from helpers import CLIENT_INFO, McpClient, distinct_copies, rpc
from launch import running_server
from manifest import SAMPLE_VAULT, find_step

STEPS = sorted(set(distinct_copies("resource_links.py", since=8)) | {10})
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO}


@pytest.fixture(scope="module", params=STEPS, ids=lambda number: f"step{number}")
def step(request):
    return request.param


@pytest.fixture(scope="module")
def url(tmp_path_factory, step):
    vault = tmp_path_factory.mktemp("links") / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    with running_server(find_step(step).server, "--vault", str(vault), timeout=30) as (url, _log):
        yield url


def session(url, version="2025-11-25") -> McpClient:
    client = McpClient(url)
    reply = client.initialize(version)
    client.session_id, client.version = reply.headers["Mcp-Session-Id"], version
    client.send(client.session_id, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"MCP-Protocol-Version": version})
    return client


def call(client, name, **arguments) -> dict:
    reply = client.send(client.session_id, rpc("tools/call", name=name, arguments=arguments),
                        {"MCP-Protocol-Version": client.version}).json()
    assert reply["result"]["isError"] is False, reply
    return reply["result"]


def links(result) -> list[dict]:
    return [block for block in result["content"] if block["type"] == "resource_link"]


def test_create_note_answers_with_a_link_to_the_note_it_made(url):
    client = session(url)
    result = call(client, "create_note", title="Linked idea", content="Try a longer autolyse.")
    assert result["content"][0]["type"] == "text"
    assert links(result) == [{"type": "resource_link", "uri": "vault:///Inbox/Linked%20idea.md",
                              "name": "Inbox/Linked idea.md", "title": "Linked idea", "mimeType": "text/markdown"}]
    read = client.send(client.session_id, rpc("resources/read", uri=links(result)[0]["uri"])).json()["result"]
    assert read["contents"][0]["text"].endswith("Try a longer autolyse.")


def test_search_links_each_note_found_once_in_order(url):
    client = session(url)
    for _ in range(300):  # the index builds in the background at first
        result = call(client, "search_vault", query="sourdough starter feeding", mode="keyword", limit=5)
        if "indexed" not in result["structuredContent"]:
            break
    paths = list(dict.fromkeys(hit["path"] for hit in result["structuredContent"]["results"]))
    assert paths and [link["name"] for link in links(result)] == paths
    assert all(link["uri"].startswith("vault:///") for link in links(result))


def test_daily_note_links_the_note_once_it_exists(url):
    client = session(url)
    offered = client.send(client.session_id, rpc("tools/list"), {"MCP-Protocol-Version": client.version}).json()
    if "daily_note" not in {tool["name"] for tool in offered["result"]["tools"]}:
        pytest.skip("this step has no daily_note")
    assert links(call(client, "daily_note", date="2026-05-01")) == []
    assert [link["name"] for link in links(call(client, "daily_note", date="2026-05-01", append="x"))] == [
        "2026-05-01.md"]


def test_a_session_before_2025_06_18_gets_the_text_alone(url):
    client = session(url, "2025-03-26")
    result = call(client, "search_vault", query="sourdough starter feeding", mode="keyword", limit=5)
    assert result["structuredContent"]["results"] and [block["type"] for block in result["content"]] == ["text"]
    result = call(client, "create_note", title="Old client note", content="x")
    assert [block["type"] for block in result["content"]] == ["text"]
    assert result["structuredContent"]["path"] == "Inbox/Old client note.md"


def test_the_stateless_era_gets_the_links(url):
    client = McpClient(url)
    body = rpc("tools/call", name="create_note", arguments={"title": "Stateless note", "content": "x"}, _meta=META)
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "create_note"}
    result = client.post(json.dumps(body), headers).json()["result"]
    assert [link["name"] for link in links(result)] == ["Inbox/Stateless note.md"]
