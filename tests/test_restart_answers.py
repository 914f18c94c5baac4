"""Answers before the index is complete, and a link graph that survives a restart.

Every step with an index (7-10): during a first build, search answers from the notes
indexed so far and says how far the build is (`indexed`, `total`). Step 10: the link
graph is stored with the index, note by note, and loaded at a restart instead of read
again; a note edited, deleted or renamed while the server was off is re-read, dropped,
or both, and no other note is read; answers given before reconcile has checked every
note say how many it has yet to check (`stale`). Real servers over HTTP, real vaults
in temporary folders, an embedder stand-in that holds its answers until told to go on;
and, in this process, searches racing a build over the index it fills. Every wait is
bounded."""
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import step_modules
from launch import quiet_environment, wait_for_url
from manifest import find_step
from test_step09_watcher import eventually
from test_step10_reconcile_and_ship import TIMEOUT, Running, serving, StandInOllama

A_MINUTE_AGO = time.time_ns() - 60 * 10**9
OLLAMA = ("--embedder", "ollama")
LETTERS = "abcdefghij"
FIRST_TASK = 5  # notes a build embeds in one call (parallel_build.py's NOTES_PER_TASK): Hub and Notes 00-03


def word(number: int) -> str:
    """A word found in one generated note only: 7 -> "qxahzz"."""
    return "qx" + LETTERS[number // 10] + LETTERS[number % 10] + "zz"


class HeldOllama(StandInOllama):
    """A stand-in for Ollama that answers the first `free` document batches at once and
    holds every later one until go() (or TIMEOUT): the index is caught part way, for as
    long as a test needs. Queries are never held, so searches answer meanwhile."""

    def __init__(self):
        super().__init__()
        self.free, self.batches, self.released = None, 0, threading.Event()

    def answer(self, path, body):
        documents = path == "/api/embed" and str((body or {}).get("input", [""])[0]).startswith("search_document")
        if documents and self.free is not None:
            self.batches += 1
            if self.batches > self.free:
                self.released.wait(TIMEOUT)
        return super().answer(path, body)

    def go(self) -> None:
        self.released.set()


def generated_vault(root: Path, notes: int) -> Path:
    """`notes` one-chunk notes, each with a word of its own and a link to the hub."""
    vault = root / "vault"
    vault.mkdir()
    (vault / "Hub.md").write_text("# Hub\n\nWhere every note points.\n")
    for number in range(notes):
        (vault / f"Note {number:02d}.md").write_text(f"# Note {number}\n\nThe word {word(number)}, see [[Hub]].\n")
    return vault


@contextmanager
def step_serving(folder: str, tmp_path: Path, *flags: str, env: dict):
    """Any step's server over HTTP, stopped by SIGTERM when the block ends."""
    log_path = tmp_path / f"server-{time.monotonic_ns()}.log"
    command = [sys.executable, str(find_step(int(folder[:2])).server), "--port", "0", *flags]
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=quiet_environment(str(tmp_path / "index")) | env)
    try:
        yield Running(process, wait_for_url(process, log_path, TIMEOUT), log_path)
    finally:
        process.terminate()
        process.wait(timeout=10)


def call(server: Running, name: str, **arguments) -> dict:
    """The whole result of a tool call, error or not."""
    reply = server.client.send(server.client.session_id, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                          "params": {"name": name, "arguments": arguments}})
    return reply.json()["result"]


# ---- every step with an index: search during a first build ------------------------------

@pytest.mark.parametrize("folder", ["07-vector-index", "08-links-and-inbox", "09-watcher", "10-reconcile-and-ship"])
def test_a_search_during_the_first_build_answers_from_the_notes_indexed_so_far(folder, tmp_path):
    vault = generated_vault(tmp_path, 40)  # 41 one-chunk notes: the first task's are embedded, the rest held
    with HeldOllama() as ollama:
        ollama.free = 1
        with step_serving(folder, tmp_path, "--vault", str(vault), *OLLAMA, env={"OLLAMA_HOST": ollama.url}) as server:
            partial = eventually(lambda: held_at(FIRST_TASK, call(server, "search_vault", query=word(0), mode="keyword")),
                                 "an answer with the first batch indexed", TIMEOUT)
            held = call(server, "search_vault", query=word(39), mode="keyword")  # a note of the held batch
            ollama.go()
            data = partial["structuredContent"]
            assert (data["indexed"], data["total"]) == (FIRST_TASK, 41)  # the first task's notes, of every note
            assert f'"indexed": {FIRST_TASK}' in partial["content"][0]["text"]  # said to a client that reads only text
            assert [hit["path"] for hit in data["results"]] == ["Note 00.md"]
            assert held["structuredContent"]["results"] == [] and held["structuredContent"]["indexed"] == FIRST_TASK
            assert fits_its_schema(folder, server, "search_vault", data)
            whole = eventually(lambda: not partly(answer := call(server, "search_vault", query=word(39),
                                                                  mode="keyword")) and answer,
                               "the end of the build", TIMEOUT)
            assert [hit["path"] for hit in whole["structuredContent"]["results"]] == ["Note 39.md"]


@pytest.mark.parametrize("folder", ["07-vector-index", "08-links-and-inbox", "09-watcher", "10-reconcile-and-ship"])
def test_every_answer_during_the_first_build_comes_without_waiting_for_it(folder, tmp_path):
    """Not only the first: each search during a build answers from the notes indexed so
    far, and the link graph's tools answer, or say what they lack, without waiting for the
    build. (They waited 5 s each.) The bound is loose for a busy machine, far below 5 s."""
    vault = generated_vault(tmp_path, 40)
    with HeldOllama() as ollama:
        ollama.free = 1
        with step_serving(folder, tmp_path, "--vault", str(vault), *OLLAMA, env={"OLLAMA_HOST": ollama.url}) as server:
            eventually(lambda: held_at(FIRST_TASK, call(server, "search_vault", query=word(0), mode="keyword")),
                       "an answer with the first batch indexed", TIMEOUT)
            for number in range(3):
                started = time.monotonic()
                answer = call(server, "search_vault", query=word(number), mode="keyword")
                assert time.monotonic() - started < 2.5 and held_at(FIRST_TASK, answer), answer
            if folder >= "08":
                started = time.monotonic()
                backlinks = call(server, "get_backlinks", path="Hub.md")
                assert time.monotonic() - started < 2.5, backlinks
                if backlinks["isError"]:  # step 10: the links come with the build's notes
                    assert f"{FIRST_TASK} of 41 notes read so far" in backlinks["content"][0]["text"], backlinks
                else:  # steps 8 and 9 read every note's links before the build
                    assert len(backlinks["structuredContent"]["backlinks"]) == 40
            ollama.go()


def fits_its_schema(folder: str, server: Running, name: str, data: dict) -> bool:
    """Whether a structured result fits the output schema tools/list gives, every field declared."""
    with step_modules(find_step(int(folder[:2])).path):
        from schema import validate
    reply = server.client.send(server.client.session_id, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    schema = {tool["name"]: tool["outputSchema"] for tool in reply.json()["result"]["tools"]}[name]
    assert validate(schema, data) == [], data
    assert set(data) <= set(schema["properties"]), f"{set(data) - set(schema['properties'])} undeclared"
    return True


def held_at(indexed: int, result: dict) -> dict | None:
    """The result if it answers from exactly `indexed` notes of a build under way."""
    return result if (partly(result) or {}).get("structuredContent", {}).get("indexed") == indexed else None


def partly(result: dict) -> dict | None:
    """The result if it is an answer from an index still being built."""
    return result if "indexed" in result.get("structuredContent", {}) else None


# ---- step 10: the link graph stored with the index --------------------------------------

@pytest.fixture
def linked_vault(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    notes = {"Hub.md": "# Hub\n", "One.md": "Links to [[Hub]]. #gone\n", "Two.md": "Links to [[Hub]].\n",
             "Three.md": "No link yet.\n", "Four.md": "Links to [[Hub]] too.\n"}
    for name, text in notes.items():
        (vault / name).write_text(text)
        os.utime(vault / name, ns=(A_MINUTE_AGO, A_MINUTE_AGO))  # old enough for its stamp to be trusted
    return vault


def start(tmp_path: Path, vault: Path, *flags: str, env=None):
    return serving(tmp_path, "--vault", str(vault), "--index-dir", str(tmp_path / "index"), *flags, env=env)


def backlinks(server: Running, path: str) -> list[str]:
    return [link["path"] for link in server.tool("get_backlinks", path=path)["backlinks"]]


def test_backlinks_after_a_restart_follow_edits_deletions_and_renames_made_while_stopped(tmp_path, linked_vault):
    with start(tmp_path, linked_vault) as server:
        server.wait_until_searchable()
        assert backlinks(server, "Hub.md") == ["Four.md", "One.md", "Two.md"]
    (linked_vault / "Three.md").write_text("Now links to [[Hub]]. #fresh\n")
    (linked_vault / "One.md").unlink()
    (linked_vault / "Two.md").rename(linked_vault / "Deux.md")

    with start(tmp_path, linked_vault) as server:
        new, changed, removed, unchanged, touched = server.report()
        assert (new, changed, removed, unchanged, touched) == (1, 1, 2, 2, 0)  # Deux; Three; One, Two; Hub, Four
        assert "links: 5 notes loaded with the index" in server.log()  # loaded, not read
        answer = server.tool("get_backlinks", path="Hub.md")
        assert [link["path"] for link in answer["backlinks"]] == ["Deux.md", "Four.md", "Three.md"]
        assert "stale" not in answer  # reconcile is done
        assert backlinks(server, "Deux.md") == []
        tags = [tag["tag"] for tag in server.tool("list_tags")["tags"]]
        assert "fresh" in tags and "gone" not in tags


def test_a_restart_reads_no_unchanged_note(tmp_path, linked_vault):
    with start(tmp_path, linked_vault) as server:
        server.wait_until_searchable()
    # Same size, same time, other text: a note read again would lose its link to Hub.
    # (A real edit always moves the time; this one hides from the stat on purpose.)
    one = linked_vault / "One.md"
    one.write_text(one.read_text().replace("[[Hub]]", "[[Hxb]]"))
    os.utime(one, ns=(A_MINUTE_AGO, A_MINUTE_AGO))

    with start(tmp_path, linked_vault) as server:
        assert server.report() == (0, 0, 0, 5, 0)
        assert backlinks(server, "Hub.md") == ["Four.md", "One.md", "Two.md"]  # One's links as stored


def test_answers_during_reconcile_say_how_many_notes_are_not_yet_checked(tmp_path, linked_vault):
    with HeldOllama() as ollama:
        env = {"OLLAMA_HOST": ollama.url}
        with start(tmp_path, linked_vault, *OLLAMA, env=env) as server:
            server.wait_until_searchable()
        for name in ("Two.md", "Three.md"):  # two notes edited while stopped: both must be embedded
            (linked_vault / name).write_text(f"Edited: [[Hub]] and [[{name[:-3]}]].\n")

        ollama.free, ollama.batches = 0, 0  # every document batch of this start is held
        with start(tmp_path, linked_vault, *OLLAMA, env=env) as server:
            eventually(lambda: ollama.batches, "a held embedding", TIMEOUT)
            answer = call(server, "get_backlinks", path="Hub.md")
            found = call(server, "search_vault", query="Links", mode="keyword")
            tags = call(server, "list_tags")
            ollama.go()
            assert answer["isError"] is False and found["isError"] is False
            stale = answer["structuredContent"]["stale"]
            assert 1 <= stale <= 5 and f'"stale": {stale}' in answer["content"][0]["text"]
            assert [link["path"] for link in answer["structuredContent"]["backlinks"]] == ["Four.md", "One.md", "Two.md"]
            assert found["structuredContent"]["stale"] >= 1 and tags["structuredContent"]["stale"] >= 1
            for name, result in (("get_backlinks", answer), ("search_vault", found), ("list_tags", tags)):
                assert fits_its_schema("10", server, name, result["structuredContent"])
            assert server.report()[:2] == (0, 2)
            after = server.tool("get_backlinks", path="Hub.md")
            assert "stale" not in after
            assert [link["path"] for link in after["backlinks"]] == ["Four.md", "One.md", "Three.md", "Two.md"]


# ---- the index a build fills, searched meanwhile (index.py: 07 to 09 alike, 10 its own) ---

@pytest.mark.parametrize("folder", ["07-vector-index", "10-reconcile-and-ship"])
def test_a_search_during_a_build_sees_each_note_whole_and_never_fails(folder, tmp_path):
    with step_modules(find_step(int(folder[:2])).path):
        from hash_embedder import HashEmbedder
        from index import Chunk, ChunkIndex
        from search import search
    embedder = HashEmbedder(dimension=64)
    chunks = [Chunk(id=f"N{n}.md#{c}", path=f"N{n}.md", heading_path=[f"N{n}"], text=f"shared words {c} {n}",
                    title=f"N{n}") for n in range(200) for c in range(4)]
    started, finished, seen, failures = [], threading.Event(), [], []

    def search_meanwhile():
        while not started and not finished.is_set():
            time.sleep(0.001)
        index = started[0]
        while not finished.is_set():
            try:
                search(index, embedder, "shared words", 5, mode="hybrid")
                with index.lock:  # what a search can see: every note it holds, with all its chunks
                    seen.append(Counter(chunk.path for chunk in index.chunks if chunk is not None))
            except Exception as error:  # noqa: BLE001 -- any failure is the finding
                failures.append(error)

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads take turns as often as they can: a race shows
    searcher = threading.Thread(target=search_meanwhile, daemon=True)
    searcher.start()
    try:
        ChunkIndex.build(tmp_path / "index", embedder, chunks, started=started.append)
    finally:
        finished.set()
        searcher.join(timeout=TIMEOUT)
        sys.setswitchinterval(switching)
    assert failures == []
    assert len(seen) > 5, "the search never ran during the build"
    assert all(set(counts.values()) <= {4} for counts in seen), [c for c in seen if set(c.values()) - {4}][:1]
