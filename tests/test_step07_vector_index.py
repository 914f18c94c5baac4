"""Step 7 over real HTTP and stdio, on a temporary copy of the sample vault with the
offline embedder: search_vault, reindex with progress, and an index that lives in
its own folder, survives restarts, and is rebuilt when it cannot be used."""
import json
import math
import re
import shutil
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import CLIENT_INFO, McpClient, rpc
from launch import quiet_environment, running_server, wait_for_url
from manifest import SAMPLE_VAULT, find_step

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "guide" / "exercises"))
from probe import StandInOllama  # noqa: E402

STEP = find_step(7)


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    vault = tmp_path_factory.mktemp("step7") / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    return vault


@pytest.fixture(scope="module")
def server(vault, tmp_path_factory):
    index_dir = tmp_path_factory.mktemp("index")
    with running_server(STEP.server, "--vault", str(vault), "--index-dir", str(index_dir)) as (url, log):
        client = McpClient(url)
        client.session_id = client.open_session()
        client.index_dir, client.log = index_dir, log
        wait_until_indexed(client)
        yield client


def wait_until_indexed(server, timeout=60.0):
    """The first build runs in the background: every test starts once it is written,
    so none depends on an earlier one having waited for it."""
    deadline = time.monotonic() + timeout
    while not (server.index_dir / "index.json").is_file() or "still being built" in call(
            server, "search_vault", query="rye").body.decode():
        assert time.monotonic() < deadline, "the first index build did not finish"
        time.sleep(0.1)


def call(server, name, id=1, meta=None, **arguments):
    params = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return server.send(server.session_id, rpc("tools/call", id=id, **params))


def search(server, **arguments) -> list[dict]:
    result = call(server, "search_vault", **arguments).json()["result"]
    assert result["isError"] is False, result
    return result["structuredContent"]["results"]


def test_a_question_finds_the_section_that_answers_it(server):
    hits = search(server, query="why did my loaf come out dense and gummy", limit=3)
    # Among the first: the offline vectors know words, not meaning, and count half (search.WEIGHTS).
    answer = next(hit for hit in hits if hit["path"] == "Bread/Troubleshooting.md")
    assert answer["heading"].endswith("Dense or gummy crumb")
    assert "gummy" in answer["snippet"].lower()
    by_words = search(server, query="why did my loaf come out dense and gummy", limit=1, mode="keyword")[0]
    assert (by_words["path"], by_words["heading"]) == (answer["path"], answer["heading"])  # first by words
    assert len({hit["path"] for hit in hits}) == len(hits)  # one section per note
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)


def test_every_hit_names_a_section_that_get_note_can_read(server):
    hits = search(server, query="salting the cabbage for kimchi", limit=5)
    assert any(hit["heading"] for hit in hits)
    for hit in hits:
        arguments = {"path": hit["path"], "heading": hit["heading"]} if hit["heading"] else {"path": hit["path"]}
        section = call(server, "get_note", **arguments).json()["result"]
        assert section["isError"] is False, section  # "" means the note's opening: read it whole
        if hit["heading"]:
            last = hit["heading"].split("#")[-1]
            assert section["structuredContent"]["text"].lstrip("#").strip().startswith(last)


def test_titles_and_aliases_are_searched_too(server):
    hits = search(server, query="first rise", limit=3, mode="keyword")  # an alias of Bulk fermentation
    assert hits[0]["path"] == "Bread/Bulk fermentation.md"


@pytest.mark.parametrize("filters,prefix", [({"folder": "Ferments"}, "Ferments/"), ({"folder": "ferments/"}, "Ferments/")])
def test_a_folder_filter_keeps_only_that_folder(server, filters, prefix):
    hits = search(server, query="salt", limit=10, **filters)
    assert hits and all(hit["path"].startswith(prefix) for hit in hits)


def test_a_tag_filter_matches_nested_tags(server):
    hits = search(server, query="rye", limit=10, tag="bread")  # Rye bread is tagged bread/rye only
    assert "Bread/Rye bread.md" in [hit["path"] for hit in hits]
    assert search(server, query="rye", limit=10, tag="no-such-tag") == []


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword"])
def test_every_mode_answers(server, mode):
    assert search(server, query="kombucha sweet tea", limit=2, mode=mode)[0]["path"] == "Ferments/Kombucha.md"


@pytest.mark.parametrize(
    "arguments,expected",
    [({"query": ""}, "query: must be a string (length 1 to 1000)"),
     ({"query": "x", "mode": "fuzzy"}, "mode: must be one of"),
     ({"query": "x", "limit": 50}, "limit: must be an integer (1 to 20)"),
     ({}, "query: missing")],
)
def test_bad_search_arguments_are_tool_errors(server, arguments, expected):
    result = call(server, "search_vault", **arguments).json()["result"]
    assert result["isError"] and expected in result["content"][0]["text"]


def sse_messages(body: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: ")]


def test_reindex_streams_progress_that_grows_then_the_result(server):
    search(server, query="first, wait for the index", limit=1)
    reply = call(server, "reindex", id=9, meta={"progressToken": "p-1"})
    assert reply.headers["Content-Type"] == "text/event-stream"
    messages = sse_messages(reply.body)
    progress = [m["params"] for m in messages[:-1]]
    assert progress and all(m["method"] == "notifications/progress" for m in messages[:-1])
    assert all(p["progressToken"] == "p-1" and p["total"] == 32 for p in progress)
    steps = [p["progress"] for p in progress]
    assert steps == sorted(set(steps)) and steps[-1] == 32  # strictly increasing, to the end
    assert messages[-1]["id"] == 9 and messages[-1]["result"]["structuredContent"]["notes"] == 32


def test_reindex_without_a_progress_token_answers_plain_json(server):
    reply = call(server, "reindex")
    assert reply.headers["Content-Type"] == "application/json"
    assert reply.json()["result"]["structuredContent"]["notes"] == 32


def test_the_index_lives_in_its_own_folder_never_in_the_vault(server, vault):
    assert (server.index_dir / "index.json").is_file()
    assert sorted(p.name for p in vault.iterdir()) == sorted(p.name for p in SAMPLE_VAULT.iterdir())


def test_reindex_over_stdio_sends_progress_lines_before_the_answer(vault, tmp_path):
    lines = [
        rpc("initialize", id=1, protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        # A search waits for the first build, which a reindex would find still running.
        rpc("tools/call", id=2, name="search_vault", arguments={"query": "rye"}),
        rpc("tools/call", id=3, name="reindex", arguments={}, _meta={"progressToken": 5}),
    ]
    done = subprocess.run([sys.executable, str(STEP.server), "--stdio", "--vault", str(vault)],
                          input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True,
                          text=True, timeout=60, env=quiet_environment(str(tmp_path / "index")))
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    assert [m["id"] for m in messages[:2]] == [1, 2] and messages[-1]["id"] == 3
    assert messages[-1]["result"]["isError"] is False
    assert {m["method"] for m in messages[2:-1]} == {"notifications/progress"}
    assert all(m["params"]["progressToken"] == 5 for m in messages[2:-1])


def start(vault, index_dir, *flags):
    """The server as a process, for the tests that restart it; returns (process, log path)."""
    log = index_dir.parent / f"server-{time.monotonic_ns()}.log"
    process = subprocess.Popen([sys.executable, str(STEP.server), "--port", "0", "--vault", str(vault),
                                "--index-dir", str(index_dir), *flags],
                               stdout=subprocess.DEVNULL, stderr=open(log, "w"),
                               env=quiet_environment(str(index_dir)))
    url = wait_for_url(process, log, 10)
    client = McpClient(url)
    client.session_id = client.open_session()
    wait_for_the_whole_index(client)
    return process, log


def wait_for_the_whole_index(client, timeout=60.0):
    """Until a search answers from the whole index, loaded or built and stored: one made
    during a first build answers too, from the notes done so far, and says `indexed`."""
    deadline = time.monotonic() + timeout
    while True:
        result = call(client, "search_vault", query="warm up", limit=1).json()["result"]
        if not result["isError"] and "indexed" not in result["structuredContent"]:
            return
        assert time.monotonic() < deadline, result
        time.sleep(0.05)


def stop(process):
    process.terminate()
    process.wait(timeout=10)


def test_a_restart_loads_the_index_instead_of_building_it(vault, tmp_path):
    index_dir = tmp_path / "index"
    process, log = start(vault, index_dir)
    stop(process)
    assert "building it" in log.read_text()
    process, log = start(vault, index_dir)
    stop(process)
    assert "loaded from" in log.read_text() and "building" not in log.read_text()


@pytest.mark.parametrize("damage", ["corrupt manifest", "other embedder", "truncated note file"])
def test_an_index_that_cannot_be_used_is_rebuilt_and_the_server_goes_on(vault, tmp_path, damage):
    index_dir = tmp_path / "index"
    process, _ = start(vault, index_dir)
    stop(process)
    manifest = index_dir / "index.json"
    if damage == "corrupt manifest":
        manifest.write_text('{"format": 1, "embedder"')
    elif damage == "other embedder":
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "embedder": "ollama/other-model"}))
    else:
        note_file = next((index_dir / json.loads(manifest.read_text())["generation"]).glob("*.json"))
        note_file.write_text(note_file.read_text()[:40])
    process, log = start(vault, index_dir, "--embedder", "hash")
    stop(process)
    assert "building it" in log.read_text()


def test_with_ollama_the_build_asks_for_32_chunks_a_request_not_one_note(vault, tmp_path, monkeypatch):
    with StandInOllama() as ollama:
        monkeypatch.setenv("OLLAMA_HOST", ollama.url)
        process, log = start(vault, tmp_path / "index", "--embedder", "ollama")
        stop(process)
    assert "ollama" in log.read_text().lower() and "indexed 32 notes" in log.read_text()
    batches = [body["input"] for body in ollama.embedded() if body["input"][0].startswith("search_document: ")]
    chunks = sum(len(batch) for batch in batches)
    assert max(len(batch) for batch in batches) <= 32 and chunks > 100  # 32 texts a request at most
    assert len(batches) <= 2 * math.ceil(chunks / 32)  # a request per note would be 32 of them


def test_reindex_flag_builds_anew_at_startup(vault, tmp_path):
    index_dir = tmp_path / "index"
    stop(start(vault, index_dir)[0])
    process, log = start(vault, index_dir, "--reindex")
    stop(process)
    assert "indexed 32 notes" in log.read_text() and "loaded from" not in log.read_text()


def test_a_client_that_leaves_during_a_reindex_does_not_stop_it(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    for number in range(400):  # enough notes that the rebuild outlives the client
        (vault / f"Note {number}.md").write_text(f"# Note {number}\n\nbread and salt, batch {number}\n")
    process, log = start(vault, tmp_path / "index")
    try:
        port = int(re.search(r":(\d+)/", log.read_text()).group(1))
        client = McpClient(f"http://127.0.0.1:{port}/mcp")
        session_id = client.open_session()
        body = json.dumps(rpc("tools/call", id=5, name="reindex", arguments={}, _meta={"progressToken": 1}))
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      f"Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session_id}\r\n"
                      f"MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {len(body)}\r\n\r\n{body}").encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 200")  # the stream has begun
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # gone, mid-rebuild
        deadline = time.monotonic() + 20
        while log.read_text().count("indexed 400 notes") < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert log.read_text().count("indexed 400 notes") == 2  # the first build, then the reindex
        assert "tool reindex failed" not in log.read_text()
    finally:
        stop(process)
