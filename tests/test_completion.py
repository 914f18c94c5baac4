"""Every step from 4 on completes the path of the vault:///{+path} resource template, over
real HTTP on a temporary vault: by the start of the path, by the start of the note's
name, by its letters in order; never a denied note nor one Obsidian's excluded files
leave out (step 10, which has them); at most 100 values, with total and hasMore; the
capability declared; what it cannot complete refused with -32602. completion.py is one
copy, but each step's protocol.py routes the request and declares the capability."""
import json
import unicodedata

import pytest

from helpers import McpClient, rpc
from launch import running_server
from manifest import find_step

STEPS = list(range(4, 11))
DENY_LIST_SINCE = 10
TEMPLATE = "vault:///{+path}"
NOTES = ["Bread/Focaccia.md", "Bread/Basic country loaf.md", "Ferments/Fermented hot sauce.md",
         "Home.md", "Reading/Focus and flow.md", "Crème fraîche.md",
         "Aa/Bread rolls for cake.md", "Private/Focaccia secrets.md", "Archive/Old focaccia.md"]
MANY = [f"Many/Note {number:03d}.md" for number in range(150)]


@pytest.fixture(scope="module", params=STEPS, ids=lambda number: f"step{number}")
def step(request):
    return request.param


@pytest.fixture(scope="module")
def client(tmp_path_factory, step):
    vault = tmp_path_factory.mktemp("complete") / "vault"
    for path in NOTES + MANY:
        if step < DENY_LIST_SINCE and path.startswith(("Private/", "Archive/")):
            continue  # no deny list yet: the step would offer them
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(f"# {path}\n", encoding="utf-8")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Archive/"]}))
    deny = ["--exclude", "private"] if step >= DENY_LIST_SINCE else []
    with running_server(find_step(step).server, "--vault", str(vault), *deny, timeout=30) as (url, _log):
        client = McpClient(url)
        client.session_id = client.open_session()
        yield client


def complete(client, value, ref=None, name="path") -> dict:
    params = {"ref": ref or {"type": "ref/resource", "uri": TEMPLATE}, "argument": {"name": name, "value": value}}
    return client.send(client.session_id, rpc("completion/complete", **params)).json()


def values(client, value) -> list[str]:
    return complete(client, value)["result"]["completion"]["values"]


def test_the_capability_is_declared(client):
    answer = client.initialize().json()["result"]
    assert answer["capabilities"]["completions"] == {}


def test_paths_that_start_with_what_is_typed_come_first_then_names_then_letters(client):
    assert values(client, "bread/") == ["Bread/Basic country loaf.md", "Bread/Focaccia.md"]
    # By the note's name, then by letters in order, the closest first (f-o-c spread over "hot sauce").
    assert values(client, "foc") == ["Bread/Focaccia.md", "Reading/Focus and flow.md", "Aa/Bread rolls for cake.md",
                                     "Ferments/Fermented hot sauce.md"]
    assert values(client, "Fer")[0] == "Ferments/Fermented hot sauce.md"
    assert values(client, unicodedata.normalize("NFD", "crème"))[0] == "Crème fraîche.md"  # spelling, case ignored
    assert values(client, "brfoc")[:2] == ["Bread/Focaccia.md", "Aa/Bread rolls for cake.md"]  # the closest first
    assert values(client, "zzz") == []


def test_denied_and_excluded_notes_are_never_offered(client, step):
    if step < DENY_LIST_SINCE:
        pytest.skip("the deny list and Obsidian's excluded files come with step 10")
    offered = values(client, "") + values(client, "focaccia") + values(client, "priv") + values(client, "arch")
    assert not [path for path in offered if path.startswith(("Private/", "Archive/"))]


def test_at_most_100_values_with_total_and_has_more(client):
    completion = complete(client, "many/")["result"]["completion"]
    assert completion["values"] == MANY[:100] and completion["total"] == 150 and completion["hasMore"] is True
    few = complete(client, "many/note 14")["result"]["completion"]
    # Ten by their path's start, then "Many/Note 014.md" and the like, by letters in order.
    assert few["values"][:10] == MANY[140:150] and few["total"] == len(few["values"]) and few["hasMore"] is False


@pytest.mark.parametrize("ref, name, value, words", [
    ({"type": "ref/prompt", "name": "summarize"}, "path", "x", "Only the path of vault:///{+path}"),
    ({"type": "ref/resource", "uri": "file:///{path}"}, "path", "x", "Only the path of vault:///{+path}"),
    ("vault:///{+path}", "path", "x", "needs params.ref"),
    (None, "folder", "x", 'params.argument must be {"name": "path"'),
    (None, "path", 7, "params.argument.value must be a string"),
    (None, "path", "x" * 1025, "at most 1024 characters"),
])
def test_what_cannot_be_completed_is_refused(client, ref, name, value, words):
    error = complete(client, value, ref, name)["error"]
    assert error["code"] == -32602 and words in error["message"]


def test_the_stateless_era_completes_too(client):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "1"}}
    params = {"ref": {"type": "ref/resource", "uri": TEMPLATE}, "argument": {"name": "path", "value": "home"},
              "_meta": meta}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "completion/complete"}
    result = client.post(json.dumps(rpc("completion/complete", **params)), headers).json()["result"]
    assert result["resultType"] == "complete" and result["completion"]["values"][0] == "Home.md"
