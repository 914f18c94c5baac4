"""One note must not take the server down: a note of 1 MB (the most a note may be) built
to make a parser's cost grow faster than its size. Nested tags ("#a/a/a/..."), whose
parents were each a copy of the tag; tens of thousands of tags, or a heading of half a
megabyte, which every chunk of the note repeated. In this process for each distinct copy
of the code (markdown.py from step 5, vault_index.py from step 7), then real servers over
HTTP, their peak memory read from /proc: the index is built, searched, written to by
create_note and started again, all well under 300 MB."""
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import McpClient, distinct_copies, note_chunks, step_modules, tool_call
from launch import quiet_environment, wait_for_url
from manifest import find_step
from test_step09_watcher import eventually

MEGABYTE = 1024 * 1024
DEPTH = MEGABYTE // 2 - 1  # "#a/a/.../a": one tag of half a million levels, just under 1 MiB
HOSTILE = {
    "Nested.md": "#" + "/".join(["a"] * DEPTH) + "\n",
    "Many tags.md": " ".join(f"#t{number}" for number in range(125_000)) + "\n",  # 1,013,890 bytes
    "Long heading.md": "# " + "h" * 500_000 + "\n\n" + "word " * 100_000,
}
PEAK_MB = 300
TIMEOUT = 120.0


@pytest.mark.parametrize("step", distinct_copies("markdown.py", since=5))
def test_a_deep_tag_files_a_bounded_number_of_parents(step):
    with step_modules(find_step(step).path):
        from markdown import MAX_TAG_PARENTS, tag_with_parents
    deep = "/".join(f"l{level}" for level in range(100))
    keys = tag_with_parents(deep)
    assert keys[:3] == ["l0", "l0/l1", "l0/l1/l2"] and keys[-1] == deep
    assert len(keys) == MAX_TAG_PARENTS + 1 and len(set(keys)) == len(keys)
    assert tag_with_parents("a/b/c") == ["a", "a/b", "a/b/c"]  # a real tag loses nothing
    huge = HOSTILE["Nested.md"][1:-1]
    assert sum(map(len, tag_with_parents(huge))) <= (MAX_TAG_PARENTS + 1) * len(huge)


@pytest.mark.parametrize("step", distinct_copies("vault_index.py", since=7))
def test_every_chunk_of_a_hostile_note_carries_a_bounded_share_of_it(step, tmp_path):
    with step_modules(find_step(step).path):
        from vault import Vault
        from vault_index import CONTEXT_CHARS, VaultIndex
    for name, text in HOSTILE.items():
        (tmp_path / name).write_text(text)
    index = VaultIndex(Vault(tmp_path), None, tmp_path / "index")
    for name, text in HOSTILE.items():
        chunks = note_chunks(index, name)
        assert len(chunks) > 100, name  # many chunks: what each repeats is what counts
        repeated = sum(len("".join(chunk.tags + chunk.aliases + chunk.heading_path)) for chunk in chunks)
        assert repeated <= len(chunks) * 10 * CONTEXT_CHARS < 2 * len(text) * 10, name
    first = note_chunks(index, "Many tags.md")[0]
    assert first.tags[:3] == ["t0", "t1", "t2"] and sum(map(len, first.tags)) <= CONTEXT_CHARS


def peak_mb(pid: int) -> float:
    """The most resident memory the process has had (VmHWM), in MB."""
    for line in Path("/proc", str(pid), "status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@contextmanager
def serving(step: int, vault: Path, index_dir: Path, log_path: Path):
    command = [sys.executable, str(find_step(step).server), "--port", "0", "--vault", str(vault)]
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=quiet_environment(str(index_dir)))
    try:
        client = McpClient(wait_for_url(process, log_path, TIMEOUT))
        client.session_id = client.open_session()
        yield process, client
    finally:
        process.terminate()
        process.wait(timeout=30)


def found(client: McpClient, word: str) -> list[str]:
    """The notes a keyword search finds, once the index is whole; [] before."""
    result = tool_call(client, "search_vault", query=word, mode="keyword")
    if result["isError"] or "indexed" in result["structuredContent"]:
        return []
    return [hit["path"] for hit in result["structuredContent"]["results"]]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from Linux's /proc")
@pytest.mark.parametrize("step", distinct_copies("vault_index.py", since=7))
def test_a_vault_of_hostile_notes_is_indexed_searched_and_written_in_little_memory(step, tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Home.md").write_text("# Home\n\nA plain note about quixotic gardens.\n")
    for name, text in HOSTILE.items():
        (vault / name).write_text(text)
    with serving(step, vault, tmp_path / "index", tmp_path / "first.log") as (process, client):
        assert eventually(lambda: found(client, "quixotic"), "a whole index", TIMEOUT) == ["Home.md"]
        assert found(client, "word") == ["Long heading.md"]
        if step >= 8:  # create_note: the most content it takes, one nested tag
            content = "#" + "/".join(["b"] * 49_990) + "\nzanzibarword\n"  # 100,000 characters at most
            made = tool_call(client, "create_note", title="Deep", content=content)
            assert not made["isError"], made["content"][0]["text"][:300]
            if step >= 9:  # the watcher indexes it
                eventually(lambda: found(client, "zanzibarword"), "the new note in search", TIMEOUT)
            assert tool_call(client, "list_tags")["isError"] is False
        assert peak_mb(process.pid) < PEAK_MB, (tmp_path / "first.log").read_text()[-2000:]
    with serving(step, vault, tmp_path / "index", tmp_path / "again.log") as (process, client):  # no death at restart
        assert eventually(lambda: found(client, "quixotic"), "the index again", TIMEOUT) == ["Home.md"]
        assert peak_mb(process.pid) < PEAK_MB


COMBINING = "a" + "\u0301\u0316" * 100_000  # NFC and NFD sort these marks by insertion: the square of their number


@pytest.mark.parametrize("step", distinct_copies("vault.py", since=4))
def test_a_path_longer_than_any_path_is_refused_before_it_is_normalised(step, tmp_path):
    with step_modules(find_step(step).path):
        from vault import MAX_PATH_CHARS, Vault, VaultError, path_to_uri, uri_to_path
    vault = Vault(tmp_path)
    started = time.monotonic()
    for path in (COMBINING, uri_to_path(path_to_uri(COMBINING)), "a/" * 5000 + "b.md"):
        with pytest.raises(VaultError, match=f"no path in a vault is longer than {MAX_PATH_CHARS}"):
            vault.read_note(path)
    assert time.monotonic() - started < 15  # normalised, the first alone took minutes
    (tmp_path / "Note.md").write_text("# Note\n")
    assert vault.read_note("Note")[0] == "Note.md"


def test_resources_read_of_a_huge_uri_is_answered_at_once(tmp_path):
    """resources/read takes a uri with no schema to bound it: only the vault's cap does."""
    with serving(10, tmp_path, tmp_path.parent / "index", tmp_path.parent / "uri.log") as (process, client):
        started = time.monotonic()
        reply = client.send(client.session_id, {"jsonrpc": "2.0", "id": 7, "method": "resources/read",
                                                "params": {"uri": "vault:///" + COMBINING + ".md"}}).json()
        assert time.monotonic() - started < 15, reply
        assert "no path in a vault is longer" in reply["error"]["message"]
