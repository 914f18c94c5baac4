"""The index as clients use it: what a tool announces before it runs, and what the log
keeps of a client's messages."""
import io
import threading
import logging

import pytest

from helpers import distinct_copies, step_modules
from manifest import find_step


@pytest.mark.parametrize("step", distinct_copies("tools.py", since=7))
def test_reindex_is_announced_as_work_a_client_should_ask_for(step):
    """A client may run a read-only, idempotent tool without asking the user; a reindex
    embeds every note again, minutes of work on a large vault, and writes a new index."""
    with step_modules(find_step(step).path):
        import tools
    TOOLS = tools.TOOLS
    hints = TOOLS["reindex"].annotations
    assert hints["readOnlyHint"] is False and hints["idempotentHint"] is False
    assert hints["destructiveHint"] is False  # no note is changed
    writes = getattr(tools, "WRITES", {"create_note"}) | {"daily_note"}  # the tools that change notes
    looks = [name for name, tool in TOOLS.items() if name != "reindex" and name not in writes]
    assert looks and all(TOOLS[name].annotations["readOnlyHint"] is True for name in looks)


class FailingCore:
    def listen(self, message, send):
        raise RuntimeError("a bug")


@pytest.mark.parametrize("step", distinct_copies("stdio_transport.py", since=9))
def test_a_subscription_that_fails_is_logged_without_the_message(step, caplog):
    """The log never holds a client's message whole: it may carry note paths and
    anything else the client sent."""
    with step_modules(find_step(step).path):
        from stdio_transport import Lines, listen
    message = {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
               "params": {"notifications": {"resourceSubscriptions": ["vault:///Private/Diary.md"]}}}
    with caplog.at_level(logging.ERROR):
        answer = listen(FailingCore(), message, Lines(io.StringIO()), {})
    assert answer["error"]["code"] == -32603 and answer["id"] == 7
    assert caplog.records, "the failure is logged"
    logged = "\n".join(record.getMessage() + str(record.exc_info) for record in caplog.records)
    assert "Diary" not in logged and "resourceSubscriptions" not in logged


# ---- an index per embedder, and builds that resume ----------------------------------

import json  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from generated_vault import make_vault  # noqa: E402
from helpers import tool_refusal, tool_session  # noqa: E402
from launch import quiet_environment  # noqa: E402
from manifest import ROOT  # noqa: E402

sys.path.insert(0, str(ROOT / "guide" / "exercises"))
from probe import StandInOllama  # noqa: E402

SERVER = find_step(10).server


class CountingOllama(StandInOllama):
    """The stand-in, slowed down so that a build can be stopped half way, and counting
    the texts it embeds (the query the server sends to learn the dimension aside)."""

    def __init__(self, delay: float = 0.0):
        super().__init__()
        self.delay = delay

    def answer(self, path, body):
        if path == "/api/embed" and self.delay:
            time.sleep(self.delay)
        return super().answer(path, body)

    def texts(self) -> int:
        return sum(1 for body in self.embedded() for text in body["input"] if not text.endswith("dimension"))


class Started:
    """step 10 over HTTP on a free port, its log in a file."""

    def __init__(self, vault: Path, index_dir: Path, embedder: str, ollama: str, log: Path, watch: str = "60"):
        env = quiet_environment(str(index_dir), embedder) | {"OLLAMA_HOST": ollama, "VAULT_MCP_WATCH_INTERVAL": watch}
        self.log = log
        with open(log, "w") as out:
            self.process = subprocess.Popen([sys.executable, str(SERVER), "--vault", str(vault), "--port", "0"],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out, env=env)

    def wait_for(self, words: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log.read_text()
            if words in text:
                return text
            assert self.process.poll() is None, f"the server ended; its log:\n{text}"
            time.sleep(0.05)
        raise AssertionError(f"no {words!r} in the log:\n{self.log.read_text()}")

    def url(self) -> str:
        return re.search(r"listening on (http://\S+)", self.wait_for("listening on")).group(1)

    def stop(self, how=signal.SIGTERM) -> None:
        self.process.send_signal(how)
        self.process.wait(timeout=20)


def embedder_folders(index_dir: Path) -> list[str]:
    return sorted(folder.name for folder in index_dir.iterdir() if (folder / "index.json").is_file())


def test_a_start_without_ollama_builds_beside_its_index_and_the_next_with_ollama_embeds_nothing(tmp_path):
    vault, index_dir = tmp_path / "vault", tmp_path / "index"
    make_vault(vault, 12)
    with CountingOllama() as ollama:
        first = Started(vault, index_dir, "auto", ollama.url, tmp_path / "1.log")
        first.wait_for("indexed 12 notes")
        first.stop()
        built = ollama.texts()
        assert built > 12
        offline = Started(vault, index_dir, "hash", ollama.url, tmp_path / "2.log")  # as a start before Ollama is up
        offline.wait_for("indexed 12 notes")
        offline.stop()
        assert len(embedder_folders(index_dir)) == 2  # the hash index beside Ollama's: neither removed
        again = Started(vault, index_dir, "auto", ollama.url, tmp_path / "3.log")
        log = again.wait_for("reconciled")
        again.stop()
    assert ollama.texts() == built, log  # Ollama's index was loaded: not one note embedded again
    assert "0 new, 0 changed, 0 removed" in log


def test_the_indexes_of_the_last_two_embedders_are_kept(tmp_path):
    with step_modules(find_step(10).path):
        from index import LAST_USED, embedder_folder, open_embedder_folder
    folders = []
    for number, name in enumerate(["ollama/nomic-embed-text", "static-minilm-256-1a2b", "hash-512"]):
        folder = open_embedder_folder(tmp_path, name)
        (folder / "index.json").write_text("{}")
        os_time = 1_700_000_000 + number  # the order of use, whatever the clock's resolution
        import os
        os.utime(folder / LAST_USED, (os_time, os_time))
        folders.append(folder)
    assert folders[0] == embedder_folder(tmp_path, "ollama/nomic-embed-text")
    assert not folders[0].exists() and folders[1].exists() and folders[2].exists()
    open_embedder_folder(tmp_path, "static-minilm-256-1a2b")  # used again: the latest; hash's stays
    assert folders[1].exists() and folders[2].exists()
    assert embedder_folder(tmp_path, "a/b") != embedder_folder(tmp_path, "a-b")  # names alike, folders apart


def test_an_index_of_the_single_index_layout_is_moved_not_rebuilt(tmp_path):
    vault, index_dir = tmp_path / "vault", tmp_path / "index"
    make_vault(vault, 6)
    old = Started(vault, index_dir, "hash", "http://127.0.0.1:9", tmp_path / "1.log")
    old.wait_for("indexed 6 notes")
    old.stop()
    [folder] = [path for path in index_dir.iterdir() if path.is_dir()]
    for entry in folder.iterdir():  # as an index made before there was a folder per embedder
        if entry.name != "last-used":
            entry.rename(index_dir / entry.name)
    folder.joinpath("last-used").unlink()
    folder.rmdir()
    again = Started(vault, index_dir, "hash", "http://127.0.0.1:9", tmp_path / "2.log")
    log = again.wait_for("reconciled")
    again.stop()
    assert "moved the index" in log and "0 new, 0 changed, 0 removed" in log
    assert not (index_dir / "index.json").exists()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_first_build_stopped_half_way_goes_on_from_where_it_stopped(tmp_path, how):
    vault, index_dir = tmp_path / "vault", tmp_path / "index"
    make_vault(vault, 60)  # 12 requests of 5 notes, a quarter of a second each
    with CountingOllama(delay=0.25) as ollama:
        first = Started(vault, index_dir, "ollama", ollama.url, tmp_path / "1.log")
        deadline = time.monotonic() + 30
        while len(ollama.embedded()) < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        asked = time.monotonic()
        first.stop(how)
        if how == signal.SIGTERM:  # a graceful stop: the note in hand is finished, the build told to stop
            assert time.monotonic() - asked < 5
            log = first.log.read_text()
            assert "the build stopped with the server" in log and "Traceback" not in log, log
        before = ollama.texts()
        again = Started(vault, index_dir, "ollama", ollama.url, tmp_path / "2.log")
        log = again.wait_for("reconciled")
        again.stop()
        after = ollama.texts() - before
        whole = Started(vault, tmp_path / "fresh", "ollama", ollama.url, tmp_path / "3.log")
        whole.wait_for("indexed 60 notes")
        whole.stop()
        total = ollama.texts() - before - after
    assert "going on with a first build" in log and "is whole now" in log, log
    in_flight = 2 * 32  # the request in hand when it stopped, and one more: a batch at most each
    assert after <= total - before + in_flight, f"embedded {after} of {total} again, {before} done before the stop"
    manifest = json.loads(next(index_dir.glob("*/index.json")).read_text())
    assert "complete" not in manifest  # whole again


def test_a_reindex_asked_while_the_start_reconciles_says_so(tmp_path):
    """Not 'already being rebuilt (0 of 0 notes done)': no rebuild is running."""
    vault, index_dir = tmp_path / "vault", tmp_path / "index"
    paths = make_vault(vault, 20)
    with CountingOllama() as ollama:
        first = Started(vault, index_dir, "ollama", ollama.url, tmp_path / "1.log")
        first.wait_for("indexed 20 notes")
        first.stop()
        for path in paths[:12]:  # twelve notes to embed again at the next start
            with open(vault / path, "a", encoding="utf-8") as note:
                note.write("\nA line added while the server was stopped.\n")
        ollama.delay = 0.5
        again = Started(vault, index_dir, "ollama", ollama.url, tmp_path / "2.log")
        client = tool_session(again.url(), find_step(10).path)
        again.wait_for("keyword postings")  # logged as the stored index is loaded, within reconcile
        refused = tool_refusal(client, "reindex")
        again.wait_for("reconciled")
        again.stop()
    assert "brought up to date" in refused and "being rebuilt" not in refused, refused


@pytest.mark.parametrize("step", distinct_copies("parallel_build.py", since=7))
@pytest.mark.parametrize("system, forks", [("darwin", False), ("win32", False), ("linux", True)])
def test_a_build_forks_its_workers_only_where_forking_a_threaded_process_is_safe(step, system, forks, monkeypatch):
    """macOS's system libraries may deadlock in a process forked from one that runs
    threads, as the server does; there the build runs in the server's own process."""
    monkeypatch.setattr(sys, "platform", system)
    with step_modules(find_step(step).path):
        import parallel_build
    monkeypatch.setattr(parallel_build.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert (parallel_build.worker_count(10_000) > 0) is forks


class Node:
    pass


@pytest.mark.parametrize("step", distinct_copies("index.py", since=7))
def test_a_load_freezes_no_cycle_that_was_already_dropped(step, tmp_path):
    """gc.freeze keeps what it freezes for good: a cycle dropped before a load must be
    freed then, not frozen with the index."""
    with step_modules(find_step(step).path):
        import index as index_module
    import gc
    import weakref
    enabled = gc.isenabled()
    gc.disable()  # no collection may happen to free it before the load does
    try:
        first, second = Node(), Node()
        first.other, second.other = second, first
        dropped = weakref.ref(first)
        del first, second
        with index_module.cycle_collector_paused():
            pass  # a load
        assert dropped() is None
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


# ---- nothing waits behind a reindex; a reindex can be cancelled -----------------------

from helpers import McpClient, StdioServer, rpc, tool_call  # noqa: E402


def reindexing_stdio(tmp_path, ollama, notes=60):
    """step 10 over stdio on a vault whose index is built, handshake done."""
    vault = tmp_path / "vault"
    make_vault(vault, notes)
    env = quiet_environment(str(tmp_path / "index"), "ollama") | {"OLLAMA_HOST": ollama.url,
                                                                   "VAULT_MCP_WATCH_INTERVAL": "60"}
    server = StdioServer(SERVER, "--vault", str(vault), env=env)
    server.handshake()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the first build has let go: a reindex is taken and ends
        answer = server.ask(rpc("tools/call", id=1, name="reindex", arguments={}))
        if not answer["result"]["isError"]:
            return server
        time.sleep(0.2)
    raise AssertionError("the first build did not end")


def answers_by_id(server, count, timeout=30) -> list:
    """The ids of the next `count` responses, in the order they came; notifications skipped."""
    ids = []
    while len(ids) < count:
        message = server.read(timeout)
        if "id" in message:
            ids.append(message["id"])
            server.last = getattr(server, "last", {}) | {message["id"]: message}
    return ids


def test_over_stdio_a_search_sent_during_a_reindex_is_answered_first(tmp_path):
    with CountingOllama() as ollama:
        server = reindexing_stdio(tmp_path, ollama)
        try:
            ollama.delay = 0.3  # the reindex: 12 requests, about 4 s
            server.send(rpc("tools/call", id=2, name="reindex", arguments={}))
            time.sleep(0.5)
            server.send(rpc("tools/call", id=3, name="search_vault", arguments={"query": "starter"}))
            assert answers_by_id(server, 2) == [3, 2]  # the search did not wait for the reindex
            assert server.last[2]["result"]["isError"] is False
        finally:
            server.process.kill()


def test_over_stdio_a_cancelled_reindex_stops_and_the_index_before_it_stays(tmp_path):
    with CountingOllama() as ollama:
        server = reindexing_stdio(tmp_path, ollama)
        try:
            ollama.delay = 0.3
            server.send(rpc("tools/call", id=7, name="reindex", arguments={}))
            time.sleep(1.0)
            server.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 7, "reason": "the user changed their mind"}})
            stopped_at = len(ollama.embedded())
            assert answers_by_id(server, 1) == [7]
            result = server.last[7]["result"]
            assert result["isError"] is True and "cancelled" in result["content"][0]["text"], result
            assert len(ollama.embedded()) <= stopped_at + 2  # no more than the requests in hand
            ollama.delay = 0
            found = server.ask(rpc("tools/call", id=8, name="search_vault", arguments={"query": "starter"}))
            assert found["result"]["isError"] is False and found["result"]["structuredContent"]["results"]
        finally:
            server.process.kill()


def test_over_http_a_cancelled_reindex_stops(tmp_path):
    vault = tmp_path / "vault"
    make_vault(vault, 60)
    with CountingOllama() as ollama:
        server = Started(vault, tmp_path / "index", "ollama", ollama.url, tmp_path / "1.log")
        try:
            server.wait_for("indexed 60 notes")
            client = McpClient(server.url())
            client.session_id = client.open_session()
            # "indexed" is said once the index is durable, a moment before the build lets go of
            # its lock: a reindex taken, and ended, says the server is free for the one below.
            deadline = time.monotonic() + 60
            while tool_call(client, "reindex")["isError"]:
                assert time.monotonic() < deadline, "the first build did not end"
                time.sleep(0.2)
            ollama.delay = 0.3
            answers = []
            reindex = threading.Thread(target=lambda: answers.append(
                client.send(client.session_id, rpc("tools/call", id=9, name="reindex", arguments={})).json()))
            reindex.start()
            time.sleep(1.0)
            reply = client.send(client.session_id, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                    "params": {"requestId": 9}})
            assert reply.status == 202
            reindex.join(timeout=10)
            assert answers and "cancelled" in answers[0]["result"]["content"][0]["text"], answers
        finally:
            server.stop()


# ---- two servers on one vault -----------------------------------------------------------

def found(client, words: str) -> bool:
    result = tool_call(client, "search_vault", query=words, limit=3, mode="keyword")
    return any("Quokka" in hit["path"] for hit in result.get("structuredContent", {}).get("results", []))


def made_and_found(maker, finders, title: str, word: str) -> None:
    """create_note through `maker`, then wait until every one of `finders` finds the note."""
    made = tool_call(maker, "create_note", title=title, content=f"The {word} sourdough method.")
    assert made["isError"] is False, made
    deadline = time.monotonic() + 30
    while not all(found(client, word) for client in finders):
        assert time.monotonic() < deadline, f"a server never found {title!r}"
        time.sleep(0.2)


def test_two_servers_on_one_vault_both_find_a_note_made_through_either_while_the_other_reindexes(tmp_path):
    vault, index_dir = tmp_path / "vault", tmp_path / "index"
    make_vault(vault, 60)
    with CountingOllama() as ollama:
        first = Started(vault, index_dir, "ollama", ollama.url, tmp_path / "1.log", watch="0.2")
        second = None
        try:
            first.wait_for("indexed 60 notes")
            second = Started(vault, index_dir, "ollama", ollama.url, tmp_path / "2.log", watch="0.2")
            second.wait_for("reconciled")
            assert "another server writes the index" in second.log.read_text()
            one, two = tool_session(first.url(), find_step(10).path), tool_session(second.url(), find_step(10).path)
            ollama.delay = 0.3  # the first server's reindex takes seconds
            reindexed = []
            reindex = threading.Thread(target=lambda: reindexed.append(tool_call(one, "reindex")))
            reindex.start()
            time.sleep(0.5)
            made_and_found(two, [one, two], "Quokka notes", "zyxquokka")
            reindex.join(timeout=60)
            assert reindexed and reindexed[0]["isError"] is False, reindexed
            assert found(one, "zyxquokka") and found(two, "zyxquokka")  # after the switch too
            ollama.delay = 0
            # The reindex removed the generation the second server loaded: it writes nothing there.
            made_and_found(two, [one, two], "Quokka more", "zyxwombat")
        finally:
            for server in (first, second):
                if server is not None:
                    server.stop()
    for log in (first.log, second.log):
        assert "Traceback" not in log.read_text(), log.read_text()
    manifest = json.loads(next(index_dir.glob("*/index.json")).read_text())
    live = next(index_dir.glob("*/index.json")).parent / manifest["generation"]
    assert len(list(live.glob("*.json"))) == 62  # the index on disk holds every note, the new ones too


# ---- Ollama found late --------------------------------------------------------------------

def free_port() -> int:
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class OllamaOnPort(CountingOllama):
    """The stand-in on a port chosen before it starts, as Ollama comes up after the server."""

    def __init__(self, port: int):
        super().__init__()
        from http.server import ThreadingHTTPServer
        handler = self.server.RequestHandlerClass
        self.server.server_close()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True


def test_a_server_started_before_ollama_switches_to_it_at_a_reindex_and_keeps_it(tmp_path):
    vault, index_dir, port = tmp_path / "vault", tmp_path / "index", free_port()
    make_vault(vault, 12)
    server = Started(vault, index_dir, "auto", f"http://127.0.0.1:{port}", tmp_path / "1.log")
    try:
        server.wait_for("indexed 12 notes")  # the static table's index: Ollama is not up yet
        client = tool_session(server.url(), find_step(10).path)
        with OllamaOnPort(port) as ollama:
            done = tool_call(client, "reindex")
            assert done["isError"] is False, done
            assert "switch" in server.log.read_text() or "Ollama answers now" in server.log.read_text()
            built = ollama.texts()
            assert built > 12  # the reindex embedded the vault with Ollama
            before = len(ollama.embedded())
            hits = tool_call(client, "search_vault", query="starter", mode="semantic")
            assert hits["isError"] is False, hits
            assert len(ollama.embedded()) == before + 1  # the query was embedded by Ollama: its index answers
    finally:
        server.stop()
    assert len(embedder_folders(index_dir)) == 2  # the table's index kept beside Ollama's


def test_a_late_ollama_is_found_by_the_look_every_so_often(tmp_path):
    with step_modules(find_step(10).path):
        from embeddings import make_embedder
        from index import open_embedder_folder
        from vault import Vault
        from vault_index import VaultIndex
        from ollama_client import OllamaEmbedder
    vault = tmp_path / "vault"
    make_vault(vault, 6)
    static, _ = make_embedder("hash")
    index = VaultIndex(Vault(vault), static, open_embedder_folder(tmp_path / "index", static.name))
    index.open()
    asked = []
    with CountingOllama() as ollama:
        def find():
            asked.append(time.monotonic())
            if len(asked) < 3:  # not up for the first two looks
                return None
            embedder = OllamaEmbedder(ollama.url)
            return embedder, open_embedder_folder(tmp_path / "index", embedder.name)
        index.look_for_better(find, every=0.05)
        deadline = time.monotonic() + 20
        while index.embedder is static and time.monotonic() < deadline:
            time.sleep(0.05)
        while (index.chunk_index is None or index.chunk_index.embedder is static) and time.monotonic() < deadline:
            time.sleep(0.05)
        index.stop()
        assert len(asked) == 3 and index.embedder is not static
        assert index.chunk_index.embedder is index.embedder and ollama.texts() > 6
        assert index.search("starter", 3)  # queries embedded by Ollama, searched in Ollama's index


def test_over_stdio_a_burst_of_calls_is_answered_each_once_whatever_the_order(tmp_path):
    """More calls at once than MAX_AT_ONCE: the reader waits for a thread, and every
    call gets exactly one answer, which JSON-RPC pairs with it by id."""
    vault = tmp_path / "vault"
    make_vault(vault, 20)
    server = StdioServer(SERVER, "--vault", str(vault), env=quiet_environment(str(tmp_path / "index")))
    try:
        server.handshake()
        calls = [rpc("tools/call", id=100 + number, name="search_vault", arguments={"query": f"bread {number}"})
                 if number % 2 else rpc("tools/call", id=100 + number, name="list_notes", arguments={})
                 for number in range(40)]
        server.send_line(b"\n".join(json.dumps(call).encode() for call in calls))
        answers = [server.read(timeout=30) for _ in calls]
        assert sorted(answer["id"] for answer in answers) == [call["id"] for call in calls]
        assert all(answer["result"]["isError"] is False for answer in answers), answers
        server.send(rpc("ping", id=1))
        assert server.read()["id"] == 1  # and nothing more came: no answer was sent twice
    finally:
        server.process.kill()
