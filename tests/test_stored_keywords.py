"""Step 10 stores the keyword postings beside the note files (stored_keywords.py), so a
restart loads them instead of tokenizing every chunk. What a reader relies on: a copy
that fits is used, and gives the postings the chunks would; a copy that does not fit
(a note file written after it, a note removed, a damaged file) is never used, and the
postings are built from the chunks as before; notes added after it are tokenized.

In this process, on step 10's ChunkIndex and VaultIndex; then a real server killed before it
could store what its watcher changed."""
import json
import os
import random
import shutil
import signal
import sys
import time
import zlib
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import step_modules
from test_step10_reconcile_and_ship import A_MINUTE_AGO, serving, vault  # noqa: F401 (vault is a fixture)

STEPS = Path(__file__).resolve().parent.parent / "steps"

with step_modules(STEPS / "10-reconcile-and-ship"):
    import stored_keywords
    from index import ChunkIndex, note_file_name
    from static_embedder import StaticEmbedder
    import vault_index as vault_index_module
    from vault import Vault
    from vault_index import VaultIndex

EMBEDDER = StaticEmbedder()
NOTES = {
    f"Kitchen/Note {number:02}.md": f"# Note {number}\n\nword{number}a and word{number}b.\n\n"
                                    f"## Part\n\nshared words, and part{number}.\n"
    for number in range(12)
}


@pytest.fixture
def index_dir(tmp_path) -> Path:
    """An index of NOTES as a build leaves it: its postings stored."""
    root = tmp_path / "vault"
    for path, text in NOTES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    VaultIndex(Vault(root), EMBEDDER, tmp_path / "index").rebuild()
    return tmp_path / "index"


def load(index_dir: Path) -> ChunkIndex:
    return ChunkIndex.load(index_dir, EMBEDDER.name, EMBEDDER.dimension)


def postings_by_chunk(index: ChunkIndex) -> dict:
    """The postings as the chunks' ids see them (rows are only where a chunk happens to be)."""
    keywords = index.keywords()
    terms = {}
    for term, (rows, counts) in keywords.postings.items():
        for row, count in zip(rows, counts):
            terms.setdefault(index.chunks[row].id, {})[term] = count
    lengths = {index.chunks[row].id: length for row, length in keywords.lengths.items()}
    return {"terms": terms, "lengths": lengths, "total": keywords.total_length}


def built_from_chunks(index_dir: Path) -> dict:
    """The postings a load without any copy builds: what every copy must give."""
    index = load(index_dir)
    index._keywords = None
    return postings_by_chunk(index)


def test_a_build_stores_the_postings_and_the_next_load_takes_them(index_dir):
    assert (index_dir / load(index_dir).generation / stored_keywords.FILE).is_file()
    index = load(index_dir)
    assert index.has_keywords() and index.keywords_stored == index.writes == 0  # nothing to store again
    assert postings_by_chunk(index) == built_from_chunks(index_dir)


def test_postings_stored_after_edits_fit_the_next_load_with_rows_renumbered(index_dir):
    index = load(index_dir)
    paths = index.note_paths()
    index.remove_note(paths[2])  # empty rows in the middle
    shorter = index.chunks_of(paths[5])[:1]  # fewer chunks: a row freed, then filled by the next note
    index.update_note(paths[5], shorter, EMBEDDER.embed_documents([shorter[0].text]), index.meta_of(paths[5]))
    new = [chunk for chunk in index.chunks_of(paths[7])]
    index.update_note(paths[7], new, EMBEDDER.embed_documents([chunk.text for chunk in new]), index.meta_of(paths[7]))
    index.save_keywords()

    again = load(index_dir)
    assert again.has_keywords() and again.keywords_stored == 0
    assert postings_by_chunk(again) == postings_by_chunk(index) == built_from_chunks(index_dir)


def test_a_note_whose_stamp_alone_changed_is_stored_again(index_dir):
    """Reconcile's touched-but-equal notes: a new file, the same chunks."""
    index = load(index_dir)
    index.set_meta("Kitchen/Note 01.md", {"size": 1, "mtime_ns": None})
    assert index.save_keywords()
    assert load(index_dir).has_keywords()


def test_a_note_file_written_after_the_copy_means_the_postings_are_built(index_dir):
    """As when the server is killed before it stores what its watcher changed."""
    index = load(index_dir)
    path = index.note_paths()[4]
    chunks = index.chunks_of(path)
    chunks[0] = replace(chunks[0], text=chunks[0].text.replace("word4a", "changedword"))  # as many, other words
    index.update_note(path, chunks, EMBEDDER.embed_documents([chunk.text for chunk in chunks]), index.meta_of(path))

    again = load(index_dir)
    assert not again.has_keywords()
    assert [again.chunks[row].path for row in again.keywords().scores(["changedword"])] == [path]
    assert again.keywords().scores(["word4a"]) == {}


def test_a_note_added_after_the_copy_is_tokenized_at_load(index_dir):
    index = load(index_dir)
    chunk = index.chunks_of(index.note_paths()[0])[0]
    added = replace(chunk, id="Kitchen/Added.md#0", path="Kitchen/Added.md", text="an addedword here")
    index.update_note("Kitchen/Added.md", [added], EMBEDDER.embed_documents([added.text]), {})

    again = load(index_dir)
    assert again.has_keywords() and again.keywords_stored is None  # stored again, with the added note
    assert [again.chunks[row].path for row in again.keywords().scores(["addedword"])] == ["Kitchen/Added.md"]
    assert postings_by_chunk(again) == built_from_chunks(index_dir)


def test_a_note_removed_after_the_copy_means_the_postings_are_built(index_dir):
    load(index_dir).remove_note("Kitchen/Note 03.md")
    again = load(index_dir)
    assert not again.has_keywords()
    assert again.keywords().scores(["word3a"]) == {} and postings_by_chunk(again) == built_from_chunks(index_dir)


def damaged(copy: bytes, how: str) -> bytes:
    """The stored copy with one thing wrong: a JSON header line, then 4-byte numbers (each
    row's length, then each term's rows and counts), then a CRC-32 of all before it, made
    right again unless the damage is to it, so that each check after it is reached."""
    line, _, numbers = copy[:-4].partition(b"\n")
    header = json.loads(line)
    first_row_of_first_term = 4 * sum(note[1] for note in header["notes"])
    if how == "a byte flipped":
        return copy[:-20] + bytes([copy[-20] ^ 1]) + copy[-19:]
    if how == "a row past the end":
        numbers = numbers[:first_row_of_first_term] + (10**6).to_bytes(4, sys.byteorder) \
            + numbers[first_row_of_first_term + 4:]
    elif how == "a term one number longer":
        header["terms"][0][1] += 1
    elif how == "cut short":
        numbers = numbers[:-4]
    elif how == "numbers left over":
        numbers += bytes(4)
    elif how == "another byte order":
        header["layout"]["byteorder"] = "big" if sys.byteorder == "little" else "little"
    elif how == "another tokenizer":
        header["tokenizer"] = "0" * 16
    elif how == "another format":
        header["format"] = 99
    elif how == "notes not a list":
        header["notes"] = {"a": 1}
    elif how == "a note listed twice":
        header["notes"].append(header["notes"][0])
    elif how == "a term that is no text":
        header["terms"][0][0] = 5
    elif how == "a count that is no number":
        header["terms"][0][1] = "12"
    elif how == "a note of 2**40 chunks":
        header["notes"][0][1] = 2**40
    elif how == "a note named by a number":
        header["notes"][0][0] = 7
    elif how == "a note named with a lone surrogate":
        header["notes"][0][0] = "Kitchen/\ud800.md"
    elif how == "not json":
        line = b"\x00garbage"
    elif how == "empty":
        return b""
    if how != "not json":
        line = json.dumps(header).encode()
    body = line + b"\n" + numbers
    return body + zlib.crc32(body).to_bytes(4, "big")


@pytest.mark.parametrize("how", ["a byte flipped", "a row past the end", "a term one number longer", "cut short",
                                 "numbers left over", "another byte order", "another tokenizer", "another format",
                                 "notes not a list", "a note listed twice", "a term that is no text",
                                 "a count that is no number", "a note of 2**40 chunks", "a note named by a number",
                                 "a note named with a lone surrogate", "not json", "empty"])
def test_a_damaged_copy_is_never_used_and_the_index_still_loads(index_dir, how):
    file = index_dir / load(index_dir).generation / stored_keywords.FILE
    file.write_bytes(damaged(file.read_bytes(), how))

    again = load(index_dir)
    assert not again.has_keywords()
    assert postings_by_chunk(again) == built_from_chunks(index_dir)


def test_a_copy_mangled_at_random_never_stops_a_load_nor_gives_other_postings(index_dir):
    """A value of the header replaced by one of another kind (the checksum made right, so
    the header's own checks are reached: the load goes on), or bytes overwritten, or the
    file cut, as a disk might (the checksum refuses them all)."""
    file = index_dir / load(index_dir).generation / stored_keywords.FILE
    good = file.read_bytes()
    line, _, numbers = good[:-4].partition(b"\n")
    odd = [None, -1, 2**40, 1.5, True, "", "\ud800", "Kitchen/Note 01.md", [], {}, [7], ["x"]]
    chance = random.Random(7)
    for _ in range(300):
        edited = chance.random() < 0.5
        if edited:
            header = json.loads(line)
            place, key = header, chance.choice(list(header))
            while isinstance(place[key], (list, dict)) and place[key] and chance.random() < 0.7:
                place = place[key]
                key = chance.choice(list(place)) if isinstance(place, dict) else chance.randrange(len(place))
            place[key] = chance.choice(odd)
            body = json.dumps(header).encode() + b"\n" + numbers
            mangled = body + zlib.crc32(body).to_bytes(4, "big")
        else:
            mangled = bytearray(good)
            for _ in range(chance.randint(1, 3)):
                mangled[chance.randrange(len(mangled))] ^= chance.randrange(1, 256)
            mangled = bytes(mangled[:chance.choice([len(mangled), chance.randrange(len(mangled))])])
        file.write_bytes(mangled)
        index = load(index_dir)
        assert edited or not index.has_keywords()  # the checksum refuses what a disk does
        keywords = index.keywords()  # and what an edit leaves in shape still answers a search
        keywords.scores(list(keywords.postings)[:20])


def test_a_copy_made_by_another_tokenizer_is_not_used(index_dir, tmp_path):
    """As after an upgrade, or a reader's edit of keyword_index.py: the same chunks, other terms."""
    changed = tmp_path / "changed-step"
    shutil.copytree(STEPS / "10-reconcile-and-ship", changed, ignore=shutil.ignore_patterns("__pycache__"))
    tokenizer = changed / "keyword_index.py"
    tokenizer.write_text(tokenizer.read_text().replace('    a about after', '    a after'), encoding="utf-8")
    with step_modules(changed):
        from index import ChunkIndex as ChangedIndex
    assert not ChangedIndex.load(index_dir, EMBEDDER.name, EMBEDDER.dimension).has_keywords()
    assert load(index_dir).has_keywords()


def test_a_copy_is_written_whole_or_not_at_all(index_dir):
    """A save that fails leaves the copy before it as it was (stale now, so refused)."""
    index = load(index_dir)
    file = index.notes_dir / stored_keywords.FILE
    before = file.read_bytes()
    index.remove_note("Kitchen/Note 00.md")
    file.with_name(file.name + ".tmp").mkdir()  # where the save writes first: it cannot
    with pytest.raises(OSError):
        index.save_keywords()
    assert file.read_bytes() == before and not load(index_dir).has_keywords()


def started(index_dir: Path, monkeypatch, delay: float) -> tuple[VaultIndex, Path, int]:
    """A server's VaultIndex, its timer set to `delay`, opened on index_dir; its copy and the copy's time."""
    monkeypatch.setattr(vault_index_module, "SAVE_KEYWORDS_AFTER", delay)
    vault_index = VaultIndex(Vault(index_dir.parent / "vault"), EMBEDDER, index_dir)
    vault_index.start().join(timeout=30)
    copy = vault_index.chunk_index.notes_dir / stored_keywords.FILE
    return vault_index, copy, copy.stat().st_mtime_ns


def edit(vault_index: VaultIndex, path: str, word: str) -> None:
    """Add a word to a note, and hand it to the index as the watcher does."""
    note = vault_index.vault.root / path
    note.write_text(note.read_text() + f"\n{word}\n", encoding="utf-8")
    vault_index.update_note(path)


def wait_until_rewritten(copy: Path, stored_at: int) -> None:
    deadline = time.monotonic() + 15
    while copy.stat().st_mtime_ns == stored_at and time.monotonic() < deadline:
        time.sleep(0.05)


def test_the_watchers_changes_are_stored_once_a_while_after_the_last(index_dir, monkeypatch):
    vault_index, copy, stored_at = started(index_dir, monkeypatch, delay=2.0)
    for number in range(3):  # a run of changes, as the watcher hands them over
        edit(vault_index, f"Kitchen/Note 0{number}.md", f"watchedword{number}")
    assert copy.stat().st_mtime_ns == stored_at  # not after each change
    wait_until_rewritten(copy, stored_at)
    again = load(index_dir)
    assert again.has_keywords() and again.keywords_stored == 0
    assert [again.chunks[row].path for row in again.keywords().scores(["watchedword2"])] == ["Kitchen/Note 02.md"]


def test_the_timer_waits_for_a_build_under_way(index_dir, monkeypatch):
    """A reindex's end removes the folder of the index it replaces: no copy is written there meanwhile."""
    vault_index, copy, stored_at = started(index_dir, monkeypatch, delay=0.5)
    edit(vault_index, "Kitchen/Note 05.md", "builtword")
    with vault_index.build_lock:  # as a rebuild holds it
        time.sleep(1.5)
        assert copy.stat().st_mtime_ns == stored_at
    wait_until_rewritten(copy, stored_at)
    assert load(index_dir).has_keywords()


# A real server, killed before it stores what its watcher changed.

def test_a_server_killed_before_it_stores_its_postings_answers_rightly_after_a_restart(tmp_path, vault):
    kimchi = vault / "Ferments" / "Kimchi.md"
    text = kimchi.read_text()
    kimchi.write_text(text + "\nAn oldmarkerword.\n")
    os.utime(kimchi, ns=(A_MINUTE_AGO, A_MINUTE_AGO))  # trusted: the next start reads no note
    flags = ("--vault", str(vault), "--index-dir", str(tmp_path / "index"), "--watch-interval", "0.1")
    with serving(tmp_path, *flags) as server:  # the first build, which stores the postings
        server.wait_for_log(r"index: keyword postings stored")

    with serving(tmp_path, *flags) as server:
        server.wait_for_log(r"reconciled: 0 new, 0 changed, 0 removed, \d+ unchanged \(0 touched")  # none to store
        assert "index: keyword postings loaded with it" in server.log()
        kimchi.write_text(text + "\nA newmarkerword.\n")
        deadline = time.monotonic() + 15
        while server.found("newmarkerword") != ["Ferments/Kimchi.md"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.found("newmarkerword") == ["Ferments/Kimchi.md"] and server.found("oldmarkerword") == []
        server.process.send_signal(signal.SIGKILL)  # long before the watcher's change is stored
        server.process.wait()

    with serving(tmp_path, *flags) as server:
        server.wait_until_searchable()
        assert "index: keyword postings to build from the chunks" in server.log()
        assert server.found("newmarkerword") == ["Ferments/Kimchi.md"]
        assert server.found("oldmarkerword") == []
        server.wait_for_log(r"index: keyword postings stored")

    with serving(tmp_path, *flags) as server:  # the start before stored them again
        server.wait_until_searchable()
        assert "index: keyword postings loaded with it" in server.log()
        assert server.found("newmarkerword") == ["Ferments/Kimchi.md"]


def test_a_server_stopped_cleanly_stores_what_its_watcher_changed(tmp_path, vault):
    """As a desktop client stops it, within the quiet time after an edit."""
    flags = ("--vault", str(vault), "--index-dir", str(tmp_path / "index"), "--watch-interval", "0.1")
    with serving(tmp_path, *flags) as server:  # the first build, which stores the postings
        server.wait_for_log(r"index: keyword postings stored")
        kimchi = vault / "Ferments" / "Kimchi.md"
        kimchi.write_text(kimchi.read_text() + "\nA stoppedmarkerword.\n")
        deadline = time.monotonic() + 15
        while server.found("stoppedmarkerword") != ["Ferments/Kimchi.md"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.found("stoppedmarkerword") == ["Ferments/Kimchi.md"]
    # serving() has stopped it with SIGTERM, as Ctrl-C or a service manager does
    with serving(tmp_path, *flags) as server:
        server.wait_until_searchable()
        assert "index: keyword postings loaded with it" in server.log()
        assert server.found("stoppedmarkerword") == ["Ferments/Kimchi.md"]
