"""Step 10's reconcile: what changed while the server was stopped is embedded again,
and nothing else; the one-line report; a reconcile cut short resumes; an index of
another embedder is refused. And the meta that step 10's index.py keeps per note.

Each "start" makes a new Vault and VaultIndex over the same folders, as a restarted
server does. The embedder is a counting fake: one call per note embedded."""
import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from helpers import note_chunks, step_modules

STEPS = Path(__file__).resolve().parent.parent / "steps"




# Step 10's index.py, reconcile.py and vault_index.py, which wires them.
with step_modules(STEPS / "10-reconcile-and-ship"):
    from index import ChunkIndex, IndexMissing, IndexStale, note_file_name
    from reconcile import CHANGED, EQUAL, NEW, REMOVED, Report, reconcile, refresh_note
    from vault import Vault
    from vault_index import VaultIndex

NOTES = {
    "Bread/Focaccia.md": "# Focaccia\n\nOil, salt, a long cold rise.\n\n## Baking\n\nA hot oven, 20 minutes.\n",
    "Bread/Rye.md": "# Rye\n\nA dense, sour loaf.\n",
    "Ferments/Kimchi.md": "# Kimchi\n\nSalt the cabbage, rinse it, add the paste.\n",
    "Ferments/Kombucha.md": "# Kombucha\n\nSweet tea and a SCOBY.\n",
    "Ferments/Sauerkraut.md": "# Sauerkraut\n\nCabbage and 2% salt.\n",
    "Inbox/Ideas.md": "",  # an empty note: no chunks, and still a note
}
A_MINUTE_AGO = time.time_ns() - 60 * 10**9  # when the server last ran: times this old are trusted


class CountingEmbedder:
    """Deterministic vectors from a hash of each text; counts its calls. fail_at=n
    raises on the n-th call, as Ollama going away would."""

    dimension = 8

    def __init__(self, name="counting-8", fail_at=None):
        self.name, self.fail_at = name, fail_at
        self.calls: list[list[str]] = []
        self.before_call = None  # a function run before each call, to act in the middle of one

    def embed_documents(self, texts):
        if self.before_call:
            self.before_call(texts)
        if len(self.calls) + 1 == self.fail_at:
            raise ConnectionError("Ollama went away")
        self.calls.append(list(texts))
        return [[byte - 128 or 1 for byte in hashlib.sha256(text.encode()).digest()[:8]] for text in texts]

    def titles(self) -> list[str]:
        """The titles of the notes embedded, in order: every chunk starts "Title > Heading"."""
        return [texts[0].split("\n")[0].split(" > ")[0] for texts in self.calls]


def write(root: Path, path: str, text: str, mtime_ns: int | None = None) -> Path:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    if mtime_ns is not None:
        os.utime(file, ns=(mtime_ns, mtime_ns))
    return file


def start(vault_dir: Path, embedder=None) -> VaultIndex:
    """What a (re)started server holds: a new Vault and VaultIndex, and the index folder on disk."""
    return VaultIndex(Vault(vault_dir), embedder or CountingEmbedder(), vault_dir.parent / "index")


def contents(index) -> dict[str, list[str]]:
    """Each note of the index with the texts of its chunks, in order."""
    return {path: [chunk.text for chunk in index.chunks_of(path)] for path in sorted(index.note_paths())}


def fresh_build(vault_dir: Path) -> dict[str, list[str]]:
    """What a new index of the vault as it is now holds."""
    vault_index = start(vault_dir)
    chunks = [chunk for path in vault_index.vault.list_notes() for chunk in note_chunks(vault_index, path)]
    return contents(ChunkIndex.build(vault_dir.parent / "fresh", vault_index.embedder, chunks))


@pytest.fixture
def vault_dir(tmp_path):
    root = tmp_path / "vault"
    for path, text in NOTES.items():
        write(root, path, text, A_MINUTE_AGO)
    return root


@pytest.fixture
def indexed(vault_dir):
    """The vault with an up-to-date, stamped index, as a server leaves it when it stops."""
    vault_index = start(vault_dir)
    vault_index.rebuild()
    reconcile(vault_index)
    return vault_dir


def test_the_report_is_one_line():
    report = Report(new=3, changed=2, removed=1, unchanged=120, touched=4)
    assert str(report) == "reconciled: 3 new, 2 changed, 1 removed, 120 unchanged (4 touched but equal)"


def test_an_index_built_without_stamps_is_stamped_without_embedding(vault_dir):
    fresh = start(vault_dir)  # as steps 7 to 9 built it: ChunkIndex.build given no meta stores no stamps
    chunks = [chunk for path in fresh.vault.list_notes() for chunk in note_chunks(fresh, path)]
    ChunkIndex.build(fresh.directory, fresh.embedder, chunks)

    vault_index = start(vault_dir)
    assert str(reconcile(vault_index)) == "reconciled: 1 new, 0 changed, 0 removed, 5 unchanged (5 touched but equal)"
    assert vault_index.embedder.calls == []  # the new one is the empty note: nothing to embed

    vault_index = start(vault_dir)
    assert str(reconcile(vault_index)) == "reconciled: 0 new, 0 changed, 0 removed, 6 unchanged (0 touched but equal)"
    assert vault_index.embedder.calls == []


def test_a_rebuild_stamps_every_note_so_the_next_start_reads_none(vault_dir):
    start(vault_dir).rebuild()

    vault_index = start(vault_dir)
    assert str(reconcile(vault_index)) == "reconciled: 0 new, 0 changed, 0 removed, 6 unchanged (0 touched but equal)"
    assert vault_index.embedder.calls == []


def test_edits_while_stopped_embed_exactly_the_notes_that_changed(indexed):
    write(indexed, "Bread/Focaccia.md", NOTES["Bread/Focaccia.md"] + "\n## Topping\n\nRosemary.\n")
    write(indexed, "Ferments/Miso.md", "# Miso\n\nSoybeans, koji, salt, and a year.\n")
    (indexed / "Bread/Rye.md").unlink()
    touched = A_MINUTE_AGO + 30 * 10**9  # rewritten by a sync client: a new time, the same bytes
    os.utime(indexed / "Ferments/Kimchi.md", ns=(touched, touched))
    (indexed / "Archive").mkdir()
    os.rename(indexed / "Ferments/Sauerkraut.md", indexed / "Archive/Sauerkraut (2023).md")

    vault_index = start(indexed)
    report = reconcile(vault_index)

    assert str(report) == "reconciled: 2 new, 1 changed, 2 removed, 3 unchanged (1 touched but equal)"
    assert sorted(vault_index.embedder.titles()) == ["Focaccia", "Miso", "Sauerkraut (2023)"]
    assert contents(vault_index.chunk_index) == fresh_build(indexed)


def test_a_new_size_is_a_change_even_when_the_time_is_kept(indexed):
    write(indexed, "Ferments/Kombucha.md", "# Kombucha\n\nSweet tea, a SCOBY, and a week.\n", A_MINUTE_AGO)
    vault_index = start(indexed)
    assert reconcile(vault_index).changed == 1
    assert vault_index.embedder.titles() == ["Kombucha"]


def test_a_touched_note_is_read_once_then_trusted_again(indexed):
    touched = A_MINUTE_AGO + 30 * 10**9
    os.utime(indexed / "Ferments/Kimchi.md", ns=(touched, touched))
    assert reconcile(start(indexed)).touched == 1
    second = start(indexed)
    assert reconcile(second).touched == 0  # its new stamp was stored
    assert second.embedder.calls == []


def test_a_same_size_edit_just_after_indexing_is_not_missed(indexed):
    # Indexed within the clock tick of its last write: on a file system that counts
    # time coarsely (FAT: 2 s), the next same-size write can keep the same time.
    file = write(indexed, "Ferments/Kombucha.md", "# Kombucha\n\nGreen tea this time.\n")
    written = file.stat().st_mtime_ns
    assert reconcile(start(indexed)).changed == 1
    write(indexed, "Ferments/Kombucha.md", "# Kombucha\n\nBlack tea this time.\n", written)  # same size, same time

    vault_index = start(indexed)
    assert reconcile(vault_index).changed == 1
    assert "Black tea" in vault_index.chunk_index.chunks_of("Ferments/Kombucha.md")[0].text


def test_a_same_size_edit_just_after_a_rebuild_is_not_missed(vault_dir):
    file = write(vault_dir, "Ferments/Kombucha.md", "# Kombucha\n\nGreen tea this time.\n")
    written = file.stat().st_mtime_ns
    start(vault_dir).rebuild()  # stamps every note: this one's time is too recent to trust
    write(vault_dir, "Ferments/Kombucha.md", "# Kombucha\n\nBlack tea this time.\n", written)

    vault_index = start(vault_dir)
    assert reconcile(vault_index).changed == 1
    assert "Black tea" in vault_index.chunk_index.chunks_of("Ferments/Kombucha.md")[0].text


def test_an_empty_note_is_new_once(vault_dir):
    vault_index = start(vault_dir)
    ChunkIndex.build(vault_index.directory, vault_index.embedder, [])
    assert reconcile(vault_index).new == 6
    assert len(vault_index.embedder.calls) == 5  # not for the empty note
    assert "Inbox/Ideas.md" in vault_index.chunk_index.note_meta()
    assert "Inbox/Ideas.md" not in vault_index.chunk_index.note_paths()  # a note without chunks has no rows
    again = reconcile(start(vault_dir))
    assert str(again) == "reconciled: 0 new, 0 changed, 0 removed, 6 unchanged (0 touched but equal)"


def test_an_empty_note_deleted_while_stopped_is_removed(indexed):
    """An empty note has a file in the index (its stamp) but no chunks: it must go too."""
    (indexed / "Inbox/Ideas.md").unlink()
    vault_index = start(indexed)
    assert str(reconcile(vault_index)) == "reconciled: 0 new, 0 changed, 1 removed, 5 unchanged (0 touched but equal)"
    assert "Inbox/Ideas.md" not in vault_index.chunk_index.note_meta()
    again = start(indexed)
    assert "Inbox/Ideas.md" not in ChunkIndex.load(again.directory, "counting-8", 8).note_meta()


def test_a_reconcile_cut_short_resumes_where_it_stopped(indexed):
    for path, text in NOTES.items():
        if text:  # every note but the empty one
            write(indexed, path, text + "\nEdited while the server was stopped.\n", A_MINUTE_AGO + 10**10)

    with pytest.raises(ConnectionError):
        reconcile(start(indexed, CountingEmbedder(fail_at=3)))  # two notes done, then Ollama goes away

    vault_index = start(indexed)
    report = reconcile(vault_index)
    assert str(report) == "reconciled: 0 new, 3 changed, 0 removed, 3 unchanged (0 touched but equal)"
    assert vault_index.embedder.titles() == ["Kimchi", "Kombucha", "Sauerkraut"]
    assert contents(vault_index.chunk_index) == fresh_build(indexed)


def test_the_index_thread_builds_the_keyword_postings_once_the_index_is_ready(indexed):
    vault_index = start(indexed)
    vault_index.start().join(timeout=60)
    assert vault_index.chunk_index._keywords is not None  # so no hybrid search has to build them


def test_an_index_of_another_embedder_is_refused_and_rebuilt(indexed):
    other = start(indexed, CountingEmbedder(name="other-8"))
    with pytest.raises(IndexStale):
        reconcile(other)
    assert other.embedder.calls == [] and other.chunk_index is None
    assert len(ChunkIndex.load(indexed.parent / "index", "counting-8", 8).note_paths()) == 5  # left as it was

    other.rebuild()  # what the caller does
    again = reconcile(start(indexed, CountingEmbedder(name="other-8")))
    assert (again.new, again.touched) == (0, 0)  # the rebuild stamped every note, the empty one too


def test_no_index_at_all_is_refused(vault_dir):
    with pytest.raises(IndexMissing):
        reconcile(start(vault_dir))


def test_a_note_edited_while_it_is_embedded_keeps_the_newer_text(indexed):
    # The watcher runs during reconcile; it stores the newer text while reconcile is
    # still embedding the older one. The older must not land on top.
    focaccia = "Bread/Focaccia.md"
    write(indexed, focaccia, NOTES[focaccia] + "\nVersion 2.\n")
    vault_index = start(indexed)

    def the_user_saves_and_the_watcher_indexes(texts):
        if "Version 2." in texts[-1]:
            vault_index.embedder.before_call = None
            write(indexed, focaccia, NOTES[focaccia] + "\nVersion 3, saved during the embedding.\n")
            assert refresh_note(vault_index, focaccia) == CHANGED  # the watcher's job

    vault_index.embedder.before_call = the_user_saves_and_the_watcher_indexes
    reconcile(vault_index)
    assert "Version 3" in vault_index.chunk_index.chunks_of(focaccia)[-1].text


# ---- refresh_note: the watcher's job from step 10 on --------------------------------

def test_refresh_note_tells_what_it_found(indexed):
    vault_index = start(indexed)
    reconcile(vault_index)
    touched = A_MINUTE_AGO + 30 * 10**9
    os.utime(indexed / "Ferments/Kimchi.md", ns=(touched, touched))
    assert refresh_note(vault_index, "Ferments/Kimchi.md") == EQUAL
    write(indexed, "Ferments/Kimchi.md", "# Kimchi\n\nWith pear.\n")
    assert refresh_note(vault_index, "Ferments/Kimchi.md") == CHANGED
    write(indexed, "Inbox/Kefir.md", "# Kefir\n\nGrains in milk.\n")
    assert refresh_note(vault_index, "Inbox/Kefir.md") == NEW
    (indexed / "Inbox/Kefir.md").unlink()
    assert refresh_note(vault_index, "Inbox/Kefir.md") == REMOVED
    assert refresh_note(vault_index, "Inbox/Kefir.md") is None  # gone, and nothing held
    assert vault_index.embedder.titles() == ["Kimchi", "Kefir"]


# ---- step 10's index.py: meta per note ---------------------------------------------

def test_meta_is_stored_with_the_note_and_loaded_again(indexed):
    handed = {}
    index = ChunkIndex.load(indexed.parent / "index", "counting-8", 8, on_links=handed.__setitem__)
    meta = index.meta_of("Bread/Rye.md")
    # The links are stored in the meta, and handed over as the file is read, not kept twice in memory.
    assert set(meta) == {"size", "mtime_ns"} and meta["size"] == len(NOTES["Bread/Rye.md"])
    assert set(handed) == set(index.note_meta()) and set(handed["Bread/Rye.md"]) == {"aliases", "tags", "links"}
    vector = index.vectors[index.rows_by_note["Bread/Rye.md"][0]]

    index.set_meta("Bread/Rye.md", {"size": 1, "mtime_ns": 2})
    again = ChunkIndex.load(indexed.parent / "index", "counting-8", 8)
    assert index.meta_of("Bread/Rye.md") == again.meta_of("Bread/Rye.md") == {"size": 1, "mtime_ns": 2}
    assert again.chunks_of("Bread/Rye.md") == index.chunks_of("Bread/Rye.md")
    assert again.vectors[again.rows_by_note["Bread/Rye.md"][0]] == vector  # the same bytes and step


def test_without_meta_an_index_behaves_as_step_7s(indexed):
    index = ChunkIndex.load(indexed.parent / "index", "counting-8", 8)
    file = index.notes_dir / note_file_name("Bread/Rye.md")
    first, newline, rest = file.read_bytes().partition(b"\n")
    stored = json.loads(first)
    del stored["meta"]  # a note file as step 7 writes it
    file.write_bytes(json.dumps(stored).encode() + newline + rest)
    index = ChunkIndex.load(indexed.parent / "index", "counting-8", 8)
    assert index.meta_of("Bread/Rye.md") == {}

    index.update_note("Bread/Rye.md", [], [])  # no chunks and no meta: the note is removed
    assert "Bread/Rye.md" not in index.note_meta() and not file.exists()
    assert index.meta_of("Bread/Rye.md") is None
    with pytest.raises(KeyError):
        index.set_meta("Bread/Rye.md", {"size": 1})
