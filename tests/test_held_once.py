"""Step 10 holds what a large vault needs in memory once: a chunk's text stays in its
note's file of the index (a search reads the texts of the hits it shows), a note's links
are held by the link graph and not again in the index's meta, their context lines stay in
the file beside the texts (read when an answer shows them), and the stored keyword
postings are read into their arrays a block at a time. A restart decodes only the first
line of each note's file, and the watcher's first snapshot waits for the load.

Each test checks what a reader relies on through that: snippets, keyword scores after
edits, backlinks after a restart, a damaged copy refused, and a server that only reads
another's index keeping its texts."""
import json
import shutil
import weakref
from pathlib import Path

import pytest

from helpers import step_modules

STEPS = Path(__file__).resolve().parent.parent / "steps"

with step_modules(STEPS / "10-reconcile-and-ship"):
    import stored_keywords
    from index import ChunkIndex, IndexCorrupt, chunk_terms, note_file_name
    from keyword_index import KeywordIndex, tokenize
    from links import LinkGraph
    from vault import Vault
    from vault_index import VaultIndex

from test_reconcile import A_MINUTE_AGO, CountingEmbedder, write  # noqa: E402

NOTES = {
    "Bread/Rye.md": "# Rye\n\nA dense, sour loaf. See [[Starter]].\n\n## Baking\n\nA slow oven, caraway seeds.\n",
    "Bread/Starter.md": "# Starter\n\nFlour and water, fed twice a day.\n",
    "Ferments/Kimchi.md": "# Kimchi\n\nSalt the cabbage, rinse it, add the paste. Like [[Starter]], it lives.\n",
}


@pytest.fixture
def vault_dir(tmp_path) -> Path:
    root = tmp_path / "vault"
    for path, text in NOTES.items():
        write(root, path, text, A_MINUTE_AGO)
    return root


def opened(vault_dir: Path) -> VaultIndex:
    """A VaultIndex as a server start makes it: loaded (or built), reconciled, links ready."""
    vault_index = VaultIndex(Vault(vault_dir), CountingEmbedder(), vault_dir.parent / "index")
    vault_index.start().join(timeout=60)
    assert vault_index.chunk_index is not None and vault_index.links is not None
    return vault_index


def restarted(vault_dir: Path) -> VaultIndex:
    """A server started, stopped, and started again: the second loads what the first stored."""
    opened(vault_dir).stop(0)  # lets go of the writer's lock, as a process that ends does
    vault_index = opened(vault_dir)
    assert vault_index.writable
    return vault_index


def texts_in_memory(index: ChunkIndex) -> list:
    return [chunk.text for chunk in index.chunks if chunk is not None and chunk.text is not None]


def scores(index: ChunkIndex, query: str) -> dict:
    return index.keywords().scores(tokenize(query))


def fresh_scores(index: ChunkIndex, query: str) -> dict:
    """The BM25 scores postings built anew from every chunk (texts read back) would give."""
    keywords = KeywordIndex()
    for path in index.note_paths():
        for row, chunk in zip(index.rows_by_note[path], index.chunks_of(path)):
            keywords.add(row, chunk_terms(chunk))
    return keywords.scores(tokenize(query))


def test_a_built_and_a_loaded_index_keep_no_text_in_memory_and_snippets_quote_the_note(vault_dir):
    built = opened(vault_dir)
    assert len(built.chunk_index) > 0 and texts_in_memory(built.chunk_index) == []
    built.stop(0)
    again = opened(vault_dir)
    assert texts_in_memory(again.chunk_index) == []
    hits = again.search("caraway", 3, mode="keyword")
    assert [hit.path for hit in hits] == ["Bread/Rye.md"] and "caraway seeds" in hits[0].snippet
    assert [chunk.text for chunk in again.chunk_index.chunks_of("Bread/Starter.md")] == \
        [chunk.text for chunk in built.chunk_index.chunks_of("Bread/Starter.md")]


def test_an_edit_and_a_removal_after_a_restart_leave_the_postings_a_fresh_build_would_make(vault_dir):
    vault_index = restarted(vault_dir)  # the texts of the old chunks are on disk only
    index = vault_index.chunk_index
    assert texts_in_memory(index) == []
    write(vault_dir, "Bread/Rye.md", "# Rye\n\nNow with fennel, no seeds at all.\n")
    vault_index.update_note("Bread/Rye.md")
    (vault_dir / "Ferments/Kimchi.md").unlink()
    vault_index.remove_note("Ferments/Kimchi.md")
    for query in ("caraway slow oven", "fennel", "cabbage paste", "rye loaf starter"):
        assert scores(index, query) == fresh_scores(index, query), query
    assert scores(index, "caraway") == {} and scores(index, "cabbage") == {}  # the old words are gone
    assert [hit.path for hit in vault_index.search("fennel", 3, mode="keyword")] == ["Bread/Rye.md"]


def test_the_links_are_held_by_the_graph_and_not_again_in_the_meta(vault_dir):
    vault_index = restarted(vault_dir)
    for meta in vault_index.chunk_index.note_meta().values():
        assert "links" not in meta and {"size", "mtime_ns"} <= set(meta)
    sources = {link.source for link in vault_index.links.backlinks("Bread/Starter.md")}
    assert sources == {"Bread/Rye.md", "Ferments/Kimchi.md"}
    stored = json.loads(next((vault_index.chunk_index.notes_dir).glob("*.json")).read_bytes().partition(b"\n")[0])
    assert "links" in stored["meta"]  # on disk they stay, for the next restart


def test_a_search_on_an_index_whose_files_a_rebuild_removed_answers_without_snippets(vault_dir):
    vault_index = restarted(vault_dir)
    index = vault_index.chunk_index
    shutil.rmtree(index.notes_dir)  # as a rebuild does to the generation it replaced
    hits = vault_index.search("caraway", 3, mode="keyword")
    assert [hit.path for hit in hits] == ["Bread/Rye.md"] and hits[0].snippet == ""


def test_a_server_that_only_reads_another_s_index_keeps_its_texts(vault_dir):
    writer = opened(vault_dir)
    reader = VaultIndex(Vault(vault_dir), CountingEmbedder(), vault_dir.parent / "index")
    reader.start().join(timeout=60)  # the writer holds the lock: this one may not write
    try:
        assert not reader.writable and texts_in_memory(reader.chunk_index)
        shutil.rmtree(writer.chunk_index.notes_dir)  # the writer's rebuild may remove what it loaded
        hits = reader.search("caraway", 3, mode="keyword")
        assert "caraway seeds" in hits[0].snippet
    finally:
        reader.stop(0)
        writer.stop(0)


@pytest.mark.parametrize("block", [4, 7, 1 << 20])
def test_the_stored_postings_read_a_block_at_a_time_are_the_postings_written(vault_dir, monkeypatch, block):
    index = opened(vault_dir).chunk_index
    assert index.save_keywords() or (index.notes_dir / stored_keywords.FILE).exists()
    monkeypatch.setattr(stored_keywords.Numbers, "BLOCK", block)  # arrays across block ends, or all in one
    loaded = ChunkIndex.load(index.directory, index.embedder_name, index.dimension)
    assert loaded.has_keywords()  # taken from the copy, not built from the chunks
    assert loaded.keywords().postings == index.keywords().postings
    assert loaded.keywords().lengths == index.keywords().lengths


def test_a_byte_flipped_in_the_last_block_of_the_stored_postings_is_refused(vault_dir, monkeypatch):
    index = opened(vault_dir).chunk_index
    copy = index.notes_dir / stored_keywords.FILE
    data = bytearray(copy.read_bytes())
    data[-CHECKSUM_AND_ONE] ^= 1  # the last number's last byte: read after every block but none
    copy.write_bytes(bytes(data))
    monkeypatch.setattr(stored_keywords.Numbers, "BLOCK", 8)
    loaded = ChunkIndex.load(index.directory, index.embedder_name, index.dimension)
    assert not loaded.has_keywords()  # refused: the postings are built from the chunks
    assert loaded.keywords().postings == index.keywords().postings


CHECKSUM_AND_ONE = stored_keywords.CHECKSUM_SIZE + 1


# region contexts-on-disk
def answers(graph) -> tuple:
    """What the graph's answers show of every note's links, contexts included."""
    return ({path: graph.backlinks(path) for path in graph.note_paths()},
            {path: graph.outgoing(path) for path in graph.note_paths()}, graph.unresolved())


def test_after_a_restart_the_link_contexts_stay_in_the_files_and_answers_show_them(vault_dir):
    write(vault_dir, "Bread/Rye.md", NOTES["Bread/Rye.md"] + "\nAlso [[Spelt]], not yet written.\n", A_MINUTE_AGO)
    vault_index = restarted(vault_dir)
    graph = vault_index.links
    assert all(context is None for entry in graph.notes.values() for _, context in entry.links)  # not in memory
    assert answers(graph) == answers(LinkGraph.build(Vault(vault_dir)))  # as a graph read from the notes
    [spelt] = graph.unresolved()
    assert spelt.context == "Also [[Spelt]], not yet written."


def test_after_a_first_build_too_the_link_contexts_stay_in_the_files(vault_dir):
    vault_index = opened(vault_dir)  # built: the graph is made of what the build read
    graph = vault_index.links
    assert all(context is None for entry in graph.notes.values() for _, context in entry.links)
    assert answers(graph) == answers(LinkGraph.build(Vault(vault_dir)))


def test_a_note_file_replaced_under_the_graph_gives_empty_contexts_not_other_notes_lines(vault_dir):
    vault_index = restarted(vault_dir)
    index, graph = vault_index.chunk_index, vault_index.links
    meta = index.meta_of("Bread/Rye.md") | {"links": {"aliases": [], "tags": [], "links": [], "contexts": []}}
    index.set_meta("Bread/Rye.md", meta)  # its file now stores no link; the graph still has one
    [backlink] = [link for link in graph.backlinks("Bread/Starter.md") if link.source == "Bread/Rye.md"]
    assert backlink.context == ""


def test_a_reader_of_another_s_index_keeps_the_contexts_in_memory(vault_dir):
    writer = opened(vault_dir)
    reader = VaultIndex(Vault(vault_dir), CountingEmbedder(), vault_dir.parent / "index")
    reader.start().join(timeout=60)
    try:
        assert not reader.writable
        contexts = [context for entry in reader.links.notes.values() for _, context in entry.links]
        assert contexts and None not in contexts
        shutil.rmtree(writer.chunk_index.notes_dir)  # the writer may replace what the reader loaded
        assert {link.context for link in reader.links.backlinks("Bread/Starter.md")} == \
            {"A dense, sour loaf. See [[Starter]].", "Salt the cabbage, rinse it, add the paste. Like [[Starter]], it lives."}
    finally:
        reader.stop(0)
        writer.stop(0)


def test_a_byte_changed_in_the_second_line_of_a_note_file_is_refused_at_the_load(vault_dir):
    index = opened(vault_dir).chunk_index
    file = index.notes_dir / note_file_name("Bread/Rye.md")
    first, _, rest = file.read_bytes().partition(b"\n")
    assert b"caraway" in rest and b"caraway" not in first  # the texts are in the second line only
    file.write_bytes(first + b"\n" + rest.replace(b"caraway", b"carawax"))
    with pytest.raises(IndexCorrupt, match="second line"):
        ChunkIndex.load(index.directory, index.embedder_name, index.dimension)


def test_a_second_line_damaged_after_the_load_costs_snippets_and_contexts_never_letters(vault_dir):
    vault_index = restarted(vault_dir)
    for path in NOTES:  # each note's texts and contexts now one text, not a list: its letters must not pass
        file = vault_index.chunk_index.notes_dir / note_file_name(path)
        first, _, rest = file.read_bytes().partition(b"\n")
        count = len(json.loads(rest)["texts"])
        file.write_bytes(first + b"\n" + json.dumps({"path": path, "texts": "x" * count, "contexts": "y"}).encode())
    hits = vault_index.search("caraway", 3, mode="keyword")
    assert [hit.path for hit in hits] == ["Bread/Rye.md"] and hits[0].snippet == ""
    assert [link.context for link in vault_index.links.backlinks("Bread/Starter.md")] == ["", ""]


def test_the_neighbours_related_notes_asks_for_read_no_context_line(vault_dir):
    graph = restarted(vault_dir).links
    asked = []
    graph.stored_contexts = lambda path: asked.append(path)  # as if read: None, so lines left empty
    assert graph.neighbours("Bread/Starter.md") == (set(), {"Bread/Rye.md", "Ferments/Kimchi.md"})
    assert graph.neighbours("Bread/Rye.md") == ({"Bread/Starter.md"}, set())
    assert asked == []  # related_notes asks this of every neighbour: no file read for it
    assert [link.context for link in graph.backlinks("Bread/Starter.md")] == ["", ""] and asked


@pytest.mark.parametrize("start", ["first build", "restart"])
def test_a_vault_index_dropped_is_freed_at_once_and_lets_go_of_its_folder(vault_dir, start):
    """The link graph reads contexts through the VaultIndex that holds it, and must not keep
    it alive: a cycle would hold the writer's lock on the index folder until a collection."""
    if start == "restart":
        opened(vault_dir).stop(0)
    vault_index = opened(vault_dir)
    assert vault_index.writable and vault_index.links.backlinks("Bread/Starter.md")
    dropped = weakref.ref(vault_index)
    del vault_index
    assert dropped() is None  # by its reference count, with no collection
    assert opened(vault_dir).writable  # the next one takes the lock
# endregion contexts-on-disk


def test_the_watcher_s_first_snapshot_comes_after_the_load_and_before_a_note_is_listed(vault_dir, monkeypatch):
    opened(vault_dir).stop(0)
    seen = []
    vault = Vault(vault_dir)
    listed = vault.all_notes
    monkeypatch.setattr(vault, "all_notes", lambda: seen.append("listed") or listed())
    vault_index = VaultIndex(vault, CountingEmbedder(), vault_dir.parent / "index")
    vault_index.start(before_reading=lambda: seen.append(("snapshot", vault_index.ready.is_set()))).join(timeout=60)
    assert seen[:2] == [("snapshot", True), "listed"]  # the stored index answered before the snapshot
    assert seen.count(("snapshot", True)) == 1


def test_a_first_build_takes_the_snapshot_before_it_lists_a_note(vault_dir, monkeypatch):
    seen = []
    vault = Vault(vault_dir)
    listed = vault.all_notes
    monkeypatch.setattr(vault, "all_notes", lambda: seen.append("listed") or listed())
    vault_index = VaultIndex(vault, CountingEmbedder(), vault_dir.parent / "index")
    vault_index.start(before_reading=lambda: seen.append("snapshot")).join(timeout=60)
    assert seen[:2] == ["snapshot", "listed"] and seen.count("snapshot") == 1
