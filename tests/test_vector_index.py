"""The index and search of step 7, and of every later step that rewrites index.py, without a
server: storage, the sketch search, BM25, fusion, filters."""
import array
import base64
import dataclasses
import gc
import hashlib
import heapq
import io
import json
import math
import os
import random
import threading
from pathlib import Path

import pytest
from clustered_vectors import ClusteredVectors
from helpers import distinct_copies, step_modules
from manifest import find_step


def modules_of(folder: Path) -> dict:
    """The names this file tests, imported from one step folder."""
    with step_modules(folder):
        import index as index_module
        import keyword_index
        import vector_search
        from index import Chunk, ChunkIndex, IndexCorrupt, IndexMissing, IndexStale, ProgressLine, note_file_name
        from keyword_index import KeywordIndex, normal_form, tokenize
        from search import reciprocal_rank_fusion, search, snippet
    return {name: value for name, value in locals().items() if name != "folder"}


# Every test runs against each copy of index.py that differs from an earlier one (a
# later step that rewrites it keeps step 7's promises): the fixture below makes this
# file's names those of the copy under test.
COPIES = {number: find_step(number).path for number in distinct_copies("index.py", since=7)}
MODULES = {number: modules_of(folder) for number, folder in COPIES.items()}
globals().update(MODULES[7])  # ChunkIndex, Chunk, search...: step 7's until a test asks for another copy
STEP = COPIES[7]


@pytest.fixture(autouse=True, params=sorted(MODULES), ids=lambda number: f"step{number}")
def index_copy(request):
    global STEP, VAULT
    globals().update(MODULES[request.param])
    STEP, VAULT = COPIES[request.param], sample_chunks()
    return request.param


# A test of a module that only step 7 holds, not index.py, runs once.
ONE_COPY = pytest.mark.parametrize("index_copy", [7], indirect=True, ids=["step7"])


# region helpers
class HashingEmbedder:
    """A tiny deterministic embedder: each word adds its own small pattern to 64 dimensions.

    It knows words, not meaning, like step 6's offline embedder: texts that share
    words point the same way."""

    name = "test-hashing"
    dimension = 64

    def embed_documents(self, texts):
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text):
        vector = [0.0] * self.dimension
        for word in tokenize(text):
            digest = hashlib.sha256(word.encode()).digest()
            for place, weight in zip(digest[:3], digest[3:6]):  # three dimensions, weights -1 to 1
                vector[place % self.dimension] += weight / 127.5 - 1.0
        length = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / length for x in vector]


class TableEmbedder:
    """Returns the vector the test chose for each text: full control of the semantic ranking."""

    name = "test-table"

    def __init__(self, table: dict[str, list[float]]):
        self.table = table
        self.dimension = len(next(iter(table.values())))

    def embed_documents(self, texts):
        return [self.table[text] for text in texts]

    def embed_query(self, text):
        return self.table[text]


def chunk(path, text, heading=None, title=None, tags=(), aliases=(), number=0):
    title = title or Path(path).stem
    folder = path.rpartition("/")[0]
    return Chunk(id=f"{path}#{number}", path=path, heading_path=[title] + ([heading] if heading else []),
                 text=text, title=title, aliases=list(aliases), tags=list(tags), folder=folder)


def sample_chunks() -> list:
    """A small vault's chunks, made with the Chunk of the copy under test."""
    return [
        chunk("Bread/Sourdough.md", "Feed the starter twice a day with equal weights of flour and water.",
              "Feeding", tags=["bread/sourdough"], number=0),
        chunk("Bread/Sourdough.md", "A levain is a portion of starter built up for one bake.",
              "Levain", tags=["bread/sourdough"], number=1),
        chunk("Bread/Rye/Pumpernickel.md", "Rye dough is sticky; a long bake at low heat darkens the crumb.",
              tags=["bread", "rye"]),
        chunk("Ferments/Kimchi.md", "Salt the cabbage, rinse it, and pack it with chili paste.",
              tags=["ferment/vegetable"]),
        chunk("Ferments/Kombucha.md", "Kombucha needs a scoby, sweet tea and a warm shelf.", tags=["ferment/drink"]),
        chunk("Journal/2024-03-01.md", "Baked a rye loaf today; the starter was sluggish in the cold.", tags=["journal"]),
        chunk("Glossary.md", "Hydration is the weight of water divided by the weight of flour.",
              aliases=["Baker's percentages"]),
    ]


VAULT = sample_chunks()


def build(tmp_path, chunks=None, embedder=None) -> ChunkIndex:
    return ChunkIndex.build(tmp_path / "index", embedder or HashingEmbedder(), VAULT if chunks is None else chunks)


def files_of(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def writes_seen(directory: Path) -> dict[str, tuple]:
    """Each file's content, inode and modification time: a file rewritten, even with the same bytes, shows."""
    return {name: (content, (directory / name).stat().st_ino, (directory / name).stat().st_mtime_ns)
            for name, content in files_of(directory).items()}


def live_chunks(index: ChunkIndex) -> list:
    """(row, chunk) of every chunk held, with its text: step 10's index keeps a stored
    chunk's text in its note's file, not in memory (texts_of)."""
    live = [(row, chunk) for row, chunk in enumerate(index.chunks) if chunk is not None]
    if not hasattr(index, "texts_of"):
        return live
    texts = index.texts_of([row for row, _ in live])
    return [(row, dataclasses.replace(chunk, text=texts[row])) for row, chunk in live]


def note_file(index: ChunkIndex, path: str) -> Path:
    return index.notes_dir / note_file_name(path)
# endregion helpers


# region storage
def test_a_loaded_index_equals_the_built_one(tmp_path):
    built = build(tmp_path)
    loaded = ChunkIndex.load(tmp_path / "index", "test-hashing", 64)
    assert len(loaded) == len(built) == len(VAULT)
    assert sorted(loaded.note_paths()) == sorted({c.path for c in VAULT})
    by_id = {c.id: (c, loaded.vectors[row]) for row, c in live_chunks(loaded)}
    built_vectors = {c.id: v for c, v in zip(built.chunks, built.vectors)}
    for original in VAULT:
        stored, vector = by_id[original.id]
        assert stored == original
        assert vector == built_vectors[original.id]  # the same bytes and step
        expected = HashingEmbedder().embed_query(original.text)
        assert vector.numbers() == pytest.approx(expected, abs=vector.step / 2 + 1e-6)  # rounded to the step
    for query in ("starter feeding", "rye bake", "kombucha tea"):
        assert search(loaded, HashingEmbedder(), query) == search(built, HashingEmbedder(), query)


def test_a_vector_is_stored_as_one_byte_a_number_in_base64():
    stored = vector_search.quantize([0.5, -1.0, 0.25, 0.0])
    assert stored.step == 1.0 / 127  # the largest number, in size, becomes 127 steps
    assert list(stored.codes) == [128 + 64, 128 - 127, 128 + 32, 128]  # 63.5 and 31.75 steps, rounded
    text = vector_search.encode_codes(stored.codes)
    assert base64.b64decode(text) == bytes([192, 1, 160, 128])
    assert vector_search.decode_codes(text, 4) == stored.codes
    assert vector_search.quantize([0.0, 0.0]) == (array.array("B", [128, 128]), 0.0)  # no direction, no step


def test_stored_vectors_keep_numbers_and_cosines_to_within_a_step():
    rng = random.Random(5)
    for _ in range(50):
        a = vector_search.unit_vector([rng.gauss(0, 1) for _ in range(768)])
        b = vector_search.unit_vector([x + rng.gauss(0, 1) for x in a])  # correlated, as neighbours are
        stored = vector_search.quantize(b)
        assert max(abs(x - y) for x, y in zip(stored.numbers(), b)) <= stored.step / 2 * 1.0001
        exact = sum(x * y for x, y in zip(a, b))
        offset = vector_search.ZERO * math.fsum(a)
        assert vector_search.cosine(a.tolist(), offset, stored) == pytest.approx(exact, abs=0.003)


def crash_while_writing(monkeypatch, after_bytes=100):
    """From now on, writing a file of the index stops after `after_bytes` characters
    as if the process were killed."""
    real_open = open

    class CutShort:
        def __init__(self, file):
            self.file = file

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, text):
            self.file.write(text[:after_bytes])
            if len(text) > after_bytes:
                raise SystemExit("killed mid-write")

        def __getattr__(self, name):
            return getattr(self.file, name)

    def cut_short_open(file, mode="r", *args, **options):
        opened = real_open(file, mode, *args, **options)
        return CutShort(opened) if "w" in mode else opened

    monkeypatch.setattr(index_module, "open", cut_short_open, raising=False)


def test_a_crash_while_updating_a_note_leaves_the_old_version(tmp_path, monkeypatch):
    index = build(tmp_path)
    before = note_file(index, "Glossary.md").read_bytes()
    crash_while_writing(monkeypatch)
    with pytest.raises(SystemExit):
        index.update_note("Glossary.md", [chunk("Glossary.md", "Rewritten completely.")], [[1.0] + [0.0] * 63])
    monkeypatch.undo()
    assert note_file(index, "Glossary.md").read_bytes() == before
    loaded = ChunkIndex.load(tmp_path / "index", "test-hashing", 64)  # no IndexCorrupt
    assert [c.text for _, c in live_chunks(loaded) if c.path == "Glossary.md"] == [VAULT[-1].text]


def test_a_crash_during_a_rebuild_leaves_the_old_index(tmp_path, monkeypatch):
    build(tmp_path)
    before = files_of(tmp_path / "index")
    crash_while_writing(monkeypatch, after_bytes=10_000)  # the first note files are written whole
    with pytest.raises(SystemExit):
        build(tmp_path, VAULT[:3] + [chunk("New.md", "x" * 20_000)])
    monkeypatch.undo()
    loaded = ChunkIndex.load(tmp_path / "index", "test-hashing", 64)
    assert sorted(c.id for c in loaded.chunks) == sorted(c.id for c in VAULT)
    after = files_of(tmp_path / "index")
    assert {name: after[name] for name in before} == before  # what was there is untouched


def test_build_syncs_file_by_file_where_sync_may_return_early(tmp_path, monkeypatch):
    synced = []
    monkeypatch.setattr(index_module.sys, "platform", "darwin")
    monkeypatch.setattr(index_module.os, "sync", lambda: synced.append("all"))
    real_fsync = index_module.os.fsync
    monkeypatch.setattr(index_module.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    build(tmp_path)
    assert "all" not in synced and len(synced) >= 6  # one per note file at least
    assert len(ChunkIndex.load(tmp_path / "index", "test-hashing", 64)) == len(VAULT)


def test_a_rebuild_replaces_the_old_generation(tmp_path):
    build(tmp_path)
    rebuilt = build(tmp_path, VAULT[:2])
    folders = [p.name for p in (tmp_path / "index").iterdir() if p.is_dir()]
    assert folders == [rebuilt.generation]
    assert len(ChunkIndex.load(tmp_path / "index", "test-hashing", 64)) == 2


# Where a chunk's fields are in step 10's note file: a chunk is a list, and what a note's
# chunks share is stored once, in "note".
AT_POSITION = {"id": 0, "heading_path": 1, "vector": 2, "step": 3}


def first_chunk_with(**fields):
    """A damage: the note file's first chunk with these fields set; a field given as a
    function is set to what it makes of the field's value. Step 10's file has two lines,
    and the texts in the second: a text set there no longer matches its checksum."""

    def damage(text: str) -> str:
        first, newline, rest = text.partition("\n")
        data = json.loads(first)
        for name, value in fields.items():
            if name == "text" and rest:
                texts = json.loads(rest)
                texts["texts"][0] = value
                rest = json.dumps(texts)
                continue
            holder, key = data["chunks"][0], name
            if "note" in data:
                holder, key = (data["note"], name) if name not in AT_POSITION else (holder, AT_POSITION[name])
            holder[key] = value(holder[key]) if callable(value) else value
        return json.dumps(data) + newline + rest

    return damage


def first_chunk_without(name: str):
    """A damage: the note file's first chunk with a field missing."""

    def damage(text: str) -> str:
        first, newline, rest = text.partition("\n")
        data = json.loads(first)
        chunk = data["chunks"][0]
        del chunk[AT_POSITION[name] if isinstance(chunk, list) else name]
        return json.dumps(data) + newline + rest

    return damage


@pytest.mark.parametrize(
    "damage, complaint",
    [
        (lambda text: text[: len(text) // 2], "damaged"),  # cut short: bad JSON
        (first_chunk_with(vector=lambda vector: "AAAA" + vector), "expected 64"),  # one number too many
        (first_chunk_with(vector=lambda vector: "!" + vector), "damaged"),  # not base64
        (first_chunk_without("heading_path"), "damaged"),
        (lambda text: "[" * 100_000, "damaged"),  # nested too deep for the JSON parser: RecursionError
        (first_chunk_with(folder=0), "folder is int, not text"),  # each would fail searches, not the load
        (first_chunk_with(id=7), "id is int, not text"),
        (first_chunk_with(text=None), "text is NoneType, not text|second line is not the one written"),
        (first_chunk_with(tags=[1]), "tags is not a list of texts"),
        (first_chunk_with(heading_path="Glossary"), "heading_path is not a list of texts"),
        (first_chunk_with(step=0.5), "step is 0.5"),  # no vector of length 1 has so coarse a step
        (first_chunk_with(step=math.nan), "step is nan"),  # JSON allows NaN, and json.dumps writes it
        (first_chunk_with(step=-0.01), "step is -0.01"),
        (first_chunk_with(step="0.01"), "step is '0.01'"),
    ],
    ids=["truncated-json", "wrong-dimension", "bad-base64", "missing-field", "deep-json", "int-folder", "int-id",
         "null-text", "int-tag", "text-heading-path", "large-step", "nan-step", "negative-step", "text-step"],
)
def test_a_damaged_note_file_is_reported_by_name(tmp_path, damage, complaint):
    index = build(tmp_path)
    file = note_file(index, "Ferments/Kimchi.md")
    file.write_text(damage(file.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(IndexCorrupt, match=complaint) as caught:
        ChunkIndex.load(tmp_path / "index", "test-hashing", 64)
    assert file.name in str(caught.value) and "rebuild" in str(caught.value)


def test_a_build_gives_the_embedder_short_notes_in_full_batches(tmp_path):
    class CountingEmbedder(HashingEmbedder):
        def __init__(self):
            self.batch_sizes = []

        def embed_documents(self, texts):
            self.batch_sizes.append(len(texts))
            return super().embed_documents(texts)

    chunks = [Chunk(f"Note {n}.md#0", f"Note {n}.md", [f"Note {n}"], f"rye loaf number {n}", f"Note {n}")
              for n in range(40)]
    embedder = CountingEmbedder()
    index = ChunkIndex.build(tmp_path / "index", embedder, chunks)
    assert embedder.batch_sizes == [index_module.EMBED_BATCH, 40 - index_module.EMBED_BATCH]  # not 40 calls
    for chunk in chunks:  # and each note got its own vectors back
        expected = vector_search.quantize(vector_search.unit_vector(embedder.embed_query(chunk.text)))
        assert index.vectors[index.rows_by_note[chunk.path][0]] == expected
    # Notes of 5 chunks: as many as fit in 32 (6 notes), never more, so Ollama is asked
    # for 30 texts at once rather than 32 and then 3.
    chunks = [Chunk(f"Note {n}.md#{k}", f"Note {n}.md", [f"Note {n}"], f"rye {n} part {k}", f"Note {n}")
              for n in range(10) for k in range(5)]
    embedder = CountingEmbedder()
    ChunkIndex.build(tmp_path / "five", embedder, chunks)
    assert embedder.batch_sizes == [30, 20]


def test_the_cycle_collector_is_paused_during_a_load_and_resumed_after_it(tmp_path, monkeypatch):
    index = build(tmp_path)
    seen = []
    read = index_module.read_note_file
    monkeypatch.setattr(index_module, "read_note_file",
                        lambda *args, **kwargs: seen.append(gc.isenabled()) or read(*args, **kwargs))
    assert len(ChunkIndex.load(tmp_path / "index", "test-hashing", 64)) == len(VAULT)
    assert seen and not any(seen) and gc.isenabled()
    note_file(index, "Glossary.md").write_text("{", encoding="utf-8")
    with pytest.raises(IndexCorrupt):
        ChunkIndex.load(tmp_path / "index", "test-hashing", 64)
    assert gc.isenabled()  # a failed load too
    gc.disable()
    try:  # and a caller who had paused it finds it paused still
        with pytest.raises(IndexCorrupt):
            ChunkIndex.load(tmp_path / "index", "test-hashing", 64)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_truncated_vector_is_detected(tmp_path):
    index = build(tmp_path)
    file = note_file(index, "Glossary.md")
    cut = first_chunk_with(vector=lambda vector: base64.b64encode(base64.b64decode(vector)[:-2]).decode())
    file.write_text(cut(file.read_text(encoding="utf-8")), encoding="utf-8")  # the last two numbers lost
    with pytest.raises(IndexCorrupt, match="62 numbers, expected 64"):
        ChunkIndex.load(tmp_path / "index", "test-hashing", 64)


@pytest.mark.parametrize("damage", ["cut short", "nested too deep", "a folder", "a long generation"])
def test_a_damaged_manifest_is_reported(tmp_path, damage):
    build(tmp_path)
    manifest = tmp_path / "index" / "index.json"
    if damage == "cut short":
        manifest.write_text('{"format": 1, "embed', encoding="utf-8")
    elif damage == "nested too deep":
        manifest.write_text("[" * 100_000, encoding="utf-8")
    elif damage == "a folder":
        manifest.unlink()
        manifest.mkdir()
    else:  # a name longer than a file system allows: not a missing folder, an error
        data = json.loads(manifest.read_text()) | {"generation": "notes-" + "a" * 300}
        manifest.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IndexCorrupt, match="manifest"):
        ChunkIndex.load(tmp_path / "index", "test-hashing", 64)


@pytest.mark.parametrize("kind", ["folder", "link", "fifo"])
def test_what_is_not_a_file_among_the_note_files_is_refused_not_read(tmp_path, kind):
    index = build(tmp_path)
    odd = index.notes_dir / "odd.json"
    if kind == "folder":
        odd.mkdir()
    elif kind == "link":
        odd.symlink_to(note_file(index, "Glossary.md"))  # a link, even to a good file: nothing here makes one
    else:
        if not hasattr(os, "mkfifo"):
            pytest.skip("no named pipes on this system")
        os.mkfifo(odd)  # opening it to read would wait for a writer, for ever
    outcome = []
    loading = threading.Thread(target=lambda: outcome.append(load_or_error(tmp_path)), daemon=True)
    loading.start()
    loading.join(timeout=20)
    assert outcome, "the load hung"
    assert isinstance(outcome[0], IndexCorrupt) and "odd.json is not a file" in str(outcome[0])


def load_or_error(tmp_path):
    try:
        return ChunkIndex.load(tmp_path / "index", "test-hashing", 64)
    except Exception as error:
        return error


def test_a_file_that_is_not_named_after_its_note_is_corrupt(tmp_path):
    index = build(tmp_path)
    note_file(index, "Glossary.md").rename(index.notes_dir / note_file_name("Elsewhere.md"))
    with pytest.raises(IndexCorrupt, match="another name"):
        ChunkIndex.load(tmp_path / "index", "test-hashing", 64)


def test_another_model_dimension_or_format_means_rebuild(tmp_path):
    build(tmp_path)
    with pytest.raises(IndexStale, match="'test-hashing'.*'nomic-embed-text'"):
        ChunkIndex.load(tmp_path / "index", "nomic-embed-text", 64)
    with pytest.raises(IndexStale, match="64 dimensions.*768 dimensions"):
        ChunkIndex.load(tmp_path / "index", "test-hashing", 768)
    manifest = tmp_path / "index" / "index.json"
    old = f'"format":{index_module.FORMAT - 1}'  # as an index written before the format changed
    manifest.write_text(manifest.read_text().replace(f'"format":{index_module.FORMAT}', old))
    with pytest.raises(IndexStale, match="format"):
        ChunkIndex.load(tmp_path / "index", "test-hashing", 64)


def test_no_index_yet(tmp_path):
    with pytest.raises(IndexMissing):
        ChunkIndex.load(tmp_path / "nothing-here", "test-hashing", 64)


def test_updating_a_note_writes_that_note_file_only(tmp_path):
    index = build(tmp_path)
    assert search(index, HashingEmbedder(), "cabbage")[0].path == "Ferments/Kimchi.md"  # keyword postings now exist
    before = writes_seen(tmp_path / "index")
    new = chunk("Ferments/Kimchi.md", "Gochugaru gives kimchi its colour.", tags=["ferment/vegetable"])
    index.update_note("Ferments/Kimchi.md", [new], HashingEmbedder().embed_documents([new.text]))
    after = writes_seen(tmp_path / "index")
    changed = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
    assert changed == {f"{index.generation}/{note_file_name('Ferments/Kimchi.md')}"}
    assert search(index, HashingEmbedder(), "gochugaru")[0].path == "Ferments/Kimchi.md"
    assert not search(index, HashingEmbedder(), "cabbage", mode="keyword")


def test_removing_a_note_deletes_its_file_only(tmp_path):
    index = build(tmp_path)
    before = writes_seen(tmp_path / "index")
    index.remove_note("Ferments/Kombucha.md")
    after = writes_seen(tmp_path / "index")
    assert set(before) - set(after) == {f"{index.generation}/{note_file_name('Ferments/Kombucha.md')}"}
    assert all(after[name] == before[name] for name in after)
    assert "Ferments/Kombucha.md" not in {hit.path for hit in search(index, HashingEmbedder(), "kombucha scoby")}
    index.update_note("Ferments/Kefir.md", [chunk("Ferments/Kefir.md", "Kefir grains in milk.")],
                      HashingEmbedder().embed_documents(["Kefir grains in milk."]))
    assert len(index.chunks) == len(VAULT)  # the emptied row was used again
    assert search(index, HashingEmbedder(), "kefir grains", mode="keyword")[0].path == "Ferments/Kefir.md"


def test_the_default_location_is_the_user_cache_keyed_by_vault(tmp_path, monkeypatch):
    monkeypatch.setattr(index_module.sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = index_module.default_index_dir(tmp_path / "vault-a")
    assert first.parent == (tmp_path / "cache" / "vault-mcp").resolve()
    assert first != index_module.default_index_dir(tmp_path / "vault-b")
    assert first == index_module.default_index_dir(tmp_path / "other" / ".." / "vault-a")  # the same vault
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG spec says: ignore it
    assert index_module.default_index_dir(tmp_path / "v").parent == (Path.home() / ".cache" / "vault-mcp").resolve()
    monkeypatch.setattr(index_module.sys, "platform", "darwin")
    assert "Library/Caches/vault-mcp" in index_module.default_index_dir(tmp_path / "v").as_posix()
    monkeypatch.setattr(index_module.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert index_module.default_index_dir(tmp_path / "v").parent == (tmp_path / "local" / "vault-mcp").resolve()
    assert index_module.default_index_dir(tmp_path / "v", override=tmp_path / "mine") == (tmp_path / "mine").resolve()


def test_the_index_is_never_inside_the_vault(tmp_path):
    with pytest.raises(ValueError, match="inside the vault"):
        index_module.default_index_dir(tmp_path, override=tmp_path / ".index")


def test_build_reports_progress_with_rate_and_time_left(tmp_path):
    ticks = iter(range(100))
    stream = io.StringIO()
    progress = ProgressLine(stream, clock=lambda: next(ticks) * 3.0)  # each note takes 3 seconds
    ChunkIndex.build(tmp_path / "index", HashingEmbedder(), VAULT, progress=progress)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "indexing: 0/6 notes"
    assert lines[1] == "indexing: 2/6 notes, 0.3 notes/s, about 12 s left"  # a log gets a line every 5 s
    assert lines[-1] == "indexed 6 notes in 18 s, 0.3 notes/s"
# endregion storage


# region search
def test_folder_filter_takes_subfolders_but_not_lookalikes(tmp_path):
    vault = VAULT + [chunk("Breadcrumbs/Panko.md", "Panko is bread made into crumbs, a bake without crust.")]
    index = build(tmp_path, vault)
    paths = {hit.path for hit in search(index, HashingEmbedder(), "bread bake", limit=10, folder="bread/")}
    assert paths == {"Bread/Sourdough.md", "Bread/Rye/Pumpernickel.md"}
    paths = {hit.path for hit in search(index, HashingEmbedder(), "bread bake", limit=10, folder="Bread/Rye")}
    assert paths == {"Bread/Rye/Pumpernickel.md"}


def test_tag_filter_honours_nested_tags(tmp_path):
    index = build(tmp_path)
    found = {hit.path for hit in search(index, HashingEmbedder(), "starter salt tea", limit=10, tag="#ferment")}
    assert found == {"Ferments/Kimchi.md", "Ferments/Kombucha.md"}
    found = {hit.path for hit in search(index, HashingEmbedder(), "starter rye", limit=10, tag="bread")}
    assert found == {"Bread/Sourdough.md", "Bread/Rye/Pumpernickel.md"}
    assert search(index, HashingEmbedder(), "starter", tag="bre") == []  # a prefix of a name is not a parent
    found = {hit.path for hit in search(index, HashingEmbedder(), "rye", limit=10, folder="Bread", tag="rye")}
    assert found == {"Bread/Rye/Pumpernickel.md"}


def test_each_note_appears_once_with_its_best_section(tmp_path):
    sections = [chunk("Long.md", f"Section {n} talks about nothing much.", f"Part {n}", number=n) for n in range(12)]
    sections[7] = chunk("Long.md", "Here the crumb, the crumb and the open crumb.", "Part 7", number=7)
    vault = sections + [chunk("Short.md", "An open crumb needs high hydration.")]
    index = build(tmp_path, vault)
    for mode in ("keyword", "hybrid"):
        hits = search(index, HashingEmbedder(), "open crumb", limit=5, mode=mode)
        assert [hit.path for hit in hits] == ["Long.md", "Short.md"]
        assert hits[0].heading_path == ["Long", "Part 7"]


def test_search_looks_further_when_one_note_fills_the_first_hits(tmp_path):
    sections = [chunk("Long.md", f"Crumb notes, part {n}.", f"Part {n}", number=n) for n in range(30)]
    other = chunk("Other.md", "A crumb, once, among many other words: " + "filler words " * 30)
    index = build(tmp_path, sections + [other])
    hits = search(index, HashingEmbedder(), "crumb", limit=2, mode="keyword")
    assert [hit.path for hit in hits] == ["Long.md", "Other.md"]  # Other.md ranks 31st of 31 chunks


def test_bm25_a_rare_word_outweighs_a_common_one(tmp_path):
    common = [chunk(f"Note{n}.md", f"Flour and water, note {n}.") for n in range(20)]
    rare = chunk("Rare.md", "Flour and water and einkorn.")
    only_common = chunk("Common.md", "Flour, flour and water.")
    index = build(tmp_path, common + [rare, only_common])
    scores = index.keywords().scores(tokenize("flour einkorn"))
    rare_row = index.rows_by_note["Rare.md"][0]
    common_row = index.rows_by_note["Common.md"][0]
    assert scores[rare_row] > 2 * scores[common_row]
    assert search(index, None, "flour einkorn", mode="keyword")[0].path == "Rare.md"


def test_keyword_postings_can_be_built_in_the_background(tmp_path):
    build(tmp_path)
    index = ChunkIndex.load(tmp_path / "index", "test-hashing", 64)
    warming = threading.Thread(target=index.keywords)
    warming.start()
    hits = search(index, HashingEmbedder(), "scoby", mode="keyword")  # waits for the postings if need be
    warming.join()
    assert [hit.path for hit in hits] == ["Ferments/Kombucha.md"]
    assert index.keywords() is index.keywords()  # built once


def test_bm25_counts_title_headings_and_aliases():
    keywords = KeywordIndex()
    keywords.add(0, keyword_index.weighted_terms("Levain", [], ["Levain"], [], "Mix flour and water, then wait."))
    keywords.add(1, keyword_index.weighted_terms("Method", [], ["Method"], [], "Mix levain and water, then wait."))
    keywords.add(2, keyword_index.weighted_terms("Hydration", ["Baker's percentages"], ["Hydration"], [], "Water."))
    keywords.add(3, keyword_index.weighted_terms("Misc", [], ["Misc", "Percentages of salt"], [], "Salt."))
    scores = keywords.scores(["levain"])
    assert scores[0] > scores[1]  # in the title beats in the text (the chunks are equally long)
    assert set(keywords.scores([normal_form("percentages")])) == {2, 3}  # an alias and a heading are searched


def test_bm25_scores_drop_with_a_removed_row():
    keywords = KeywordIndex()
    terms = keyword_index.weighted_terms("A", [], ["A"], [], "einkorn spelt")
    keywords.add(0, terms)
    keywords.add(1, keyword_index.weighted_terms("B", [], ["B"], [], "spelt"))
    keywords.remove(0, terms)
    assert keywords.scores(["einkorn"]) == {}
    assert list(keywords.scores(["spelt"])) == [1]
    assert "einkorn" not in keywords.postings
    fresh = KeywordIndex()  # and the scores are those of an index that never held the row
    fresh.add(1, keyword_index.weighted_terms("B", [], ["B"], [], "spelt"))
    assert keywords.scores(["spelt"]) == fresh.scores(["spelt"])


def test_removing_a_row_removes_that_row_whatever_its_bytes_neighbours():
    """Postings keep rows as 4-byte numbers and find one by its bytes: the bytes of
    row 1 (01 00 00 00) also appear across rows 256 and 512 (00 01 00 00 00 02 ...),
    one byte in. Only the row itself may go."""
    terms = keyword_index.weighted_terms("N", [], ["N"], [], "spelt")
    keywords = KeywordIndex()
    for row in (256, 512, 1, 2):
        keywords.add(row, terms)
    keywords.remove(1, terms)
    keywords.remove(2, terms)
    assert sorted(keywords.scores(["spelt"])) == [256, 512]


def test_fusion_rewards_agreement():
    fused = reciprocal_rank_fusion({"semantic": ["c", "a", "x"], "keyword": ["b", "a"]}, {"semantic": 1, "keyword": 1})
    assert max(fused, key=fused.get) == "a"  # second in both beats first in one
    fused = reciprocal_rank_fusion({"semantic": ["c", "a"], "keyword": ["b", "a"]}, {"semantic": 3, "keyword": 1})
    assert fused["c"] > fused["b"]  # the weights count


def test_hybrid_search_prefers_a_chunk_strong_in_both(tmp_path):
    def direction(cosine):  # a unit vector with that cosine to the query's vector [1, 0, 0]
        return [cosine, math.sqrt(1 - cosine * cosine), 0.0]

    texts = {
        "Middle.md": ("rye crumb", direction(0.9)),  # second in both rankings
        "Words.md": ("rye rye crumb crumb", [0.0, 0.0, 1.0]),  # first by keywords, last by meaning
        "Meaning.md": ("a dense dark loaf", direction(1.0)),  # first by meaning, no keyword
    }
    texts.update({f"Filler{n}.md": (f"loaf {n}", direction(0.8 - n / 100)) for n in range(6)})
    table = {text: vector for text, vector in texts.values()} | {"rye crumb?": [1.0, 0.0, 0.0]}
    # Both rankings count alike for an index of the offline embedder (search.WEIGHTS);
    # with a real model's weights, the model's first chunk stays first instead.
    embedder = TableEmbedder(table)
    embedder.name = "hash-table"
    index = build(tmp_path, [chunk(path, text) for path, (text, _) in texts.items()], embedder)
    assert search(index, embedder, "rye crumb?", limit=1, mode="keyword")[0].path == "Words.md"
    assert search(index, embedder, "rye crumb?", limit=1, mode="semantic")[0].path == "Meaning.md"
    hits = search(index, embedder, "rye crumb?", limit=3)
    assert hits[0].path == "Middle.md"
    assert hits[0].semantic == pytest.approx(0.9, abs=1e-6) and hits[0].keyword > 0


def test_hits_carry_path_headings_score_and_snippet(tmp_path):
    index = build(tmp_path)
    hit = search(index, HashingEmbedder(), "levain", limit=1)[0]
    assert (hit.path, hit.heading_path) == ("Bread/Sourdough.md", ["Sourdough", "Levain"])
    assert hit.score > 0 and "levain" in hit.snippet.lower()


def test_snippet_shows_the_matched_words():
    text = "Intro words. " * 40 + "Here the starters were fed at dawn. " + "Closing words. " * 40
    piece = snippet(text, tokenize("feeding starter"))
    assert "starters" in piece and len(piece) < 230
    assert piece.startswith("…") and piece.endswith("…")
    assert snippet(text, []).startswith("Intro words.")  # no words to show: the start of the chunk


def test_snippet_prefers_the_place_with_most_query_words():
    text = "rye " + "filler " * 60 + "a rye and spelt loaf " + "filler " * 60 + "spelt"
    assert "rye and spelt" in snippet(text, tokenize("rye spelt"))


def test_semantic_mode_snippet_is_the_chunk_start(tmp_path):
    index = build(tmp_path)
    hit = search(index, HashingEmbedder(), "scoby tea", limit=1, mode="semantic")[0]
    assert hit.snippet.startswith("Kombucha needs")


def test_bad_mode_and_empty_queries(tmp_path):
    index = build(tmp_path)
    with pytest.raises(ValueError, match="mode"):
        search(index, HashingEmbedder(), "rye", mode="fuzzy")
    assert search(index, None, "the and of", mode="keyword") == []  # only stopwords
    assert search(index, HashingEmbedder(), "rye", limit=0) == []
# endregion search


def test_a_generic_faq_section_never_crowds_out_the_note_about_the_question(tmp_path):
    """A note whose every section is about the question beats a FAQ with one section a
    little nearer to it: with a real model, a note's mean vector joins its sections'."""
    def toward(share, other):  # a unit vector with cosine `share` to the question's [1, 0, 0, ...]
        vector = [0.0] * 6
        vector[0], vector[other] = share, math.sqrt(1 - share * share)
        return vector

    texts = {  # text: (note, heading, vector)
        "Which notes link to this one, in a side panel.": ("Backlinks.md", "Panel", toward(0.6, 1)),
        "Linked and unlinked mentions, told apart.": ("Backlinks.md", "Mentions", toward(0.6, 2)),
        "Open a mention where it is written.": ("Backlinks.md", "Settings", toward(0.6, 3)),
        "Questions people ask about panels and links.": ("FAQ.md", "Panels", toward(0.65, 4)),
        "Refunds are not possible after thirty days.": ("FAQ.md", "Refunds", toward(0.0, 5)),
        "The changelog moved to the website.": ("FAQ.md", "Changelog", toward(0.0, 4)),
    }
    question = "what shows me the pages that point here?"
    embedder = TableEmbedder({text: vector for text, (_, _, vector) in texts.items()} | {question: toward(1.0, 1)})
    embedder.name = "model-table"  # not "hash-...": a real model's weights (search.WEIGHTS)
    chunks = [chunk(path, text, heading, number=number)
              for number, (text, (path, heading, _)) in enumerate(texts.items())]
    index = build(tmp_path, chunks, embedder)
    for mode in ("semantic", "hybrid"):
        assert [hit.path for hit in search(index, embedder, question, limit=2, mode=mode)] == [
            "Backlinks.md", "FAQ.md"], mode


def test_a_notes_evidence_is_the_mean_over_its_sections_not_their_sum(tmp_path):
    """A long note with many sections a little near the question must not outweigh a
    short one right on it: the note's share is divided by its number of sections."""
    def toward(share, other):  # a unit vector with cosine `share` to the question's [1, 0, 0, ...]
        vector = [0.0] * 12
        vector[0], vector[other] = share, math.sqrt(1 - share * share)
        return vector

    texts = {"The answer itself.": ("Short.md", toward(0.8, 1))}
    texts.update({f"Aside number {n}.": ("Long.md", toward(0.5, n)) for n in range(2, 12)})
    question = "the question?"
    embedder = TableEmbedder({text: vector for text, (_, vector) in texts.items()} | {question: toward(1.0, 1)})
    embedder.name = "model-table"  # a real model's weights, with the note's evidence (search.WEIGHTS)
    index = build(tmp_path, [chunk(path, text, number=number)
                             for number, (text, (path, _)) in enumerate(texts.items())], embedder)
    assert [hit.path for hit in search(index, embedder, question, limit=2, mode="semantic")] == ["Short.md", "Long.md"]


# region tokenizer
@pytest.mark.parametrize(
    "words, form",
    [
        (["bake", "baked", "bakes", "baking"], "bake"),
        (["note", "notes", "noted", "noting"], "note"),
        (["change", "changes", "changed", "changing"], "chang"),
        (["starter", "starters"], "starter"),
        (["proof", "proofed", "proofing", "proofs"], "proof"),
        (["berry", "berries"], "berry"),
        (["batch", "batches"], "batch"),
        (["glass", "glasses"], "glass"),
        (["stop", "stopped", "stopping"], "stop"),
        (["ferment", "fermented", "fermenting", "ferments"], "ferment"),
        (["Rye", "RYE", "rye"], "rye"),
    ],
)
def test_word_forms_meet(words, form):
    assert {normal_form(word) for word in words} == {form}


def test_words_that_must_not_shrink():
    assert [normal_form(w) for w in ["seed", "need", "string", "citrus", "basis", "sing", "2024"]] == [
        "seed", "need", "string", "citrus", "basis", "sing", "2024"]


def test_tokenize_drops_stopwords_and_splits_on_punctuation():
    assert tokenize("The starter's rise, in 2024: crème_fraîche!") == ["starter", "rise", "2024", "crèm", "fraîch"]


def test_notes_never_meet_not(tmp_path):
    """Folding a word's ending must not turn it into another word: "notes" is not "not"."""
    assert normal_form("notes") != normal_form("not")
    chunks = [chunk("Bread/Failures.md", "The loaf did not rise, and the crust would not brown."),
              chunk("Bread/Log.md", "Keep notes on every bake: flour, water, time.")]
    hits = search(build(tmp_path, chunks), None, "notes", mode="keyword")
    assert [hit.path for hit in hits] == ["Bread/Log.md"]


def test_question_words_never_decide_a_ranking(tmp_path):
    """How a question is asked ("why does my", "what can I do") says nothing about what it
    is about: a section full of question words must not beat the one on the subject."""
    assert tokenize("How do I, what can my, why would you") == []
    chunks = [chunk("Bread/Starter.md", "A starter that smells of acetone is hungry: feed it more often."),
              chunk("FAQ.md", "Why? What can I do? How do I know? Why does my question go unanswered? "
                              "What can you do, and how would I ask?")]
    hits = search(build(tmp_path, chunks), None, "why does my starter smell, what can I do about it?",
                  mode="keyword")
    assert [hit.path for hit in hits] == ["Bread/Starter.md"]
# endregion tokenizer


# region the sketch search
def test_sketch_bits_are_the_signs():
    assert vector_search.sketch(vector_search.quantize([0.5, -0.1, 0.0, -3.0]).codes) == 0b0101


@pytest.fixture(scope="module")
def clustered():
    """About 2,500 chunk vectors in 640 notes on 10 topics, and 20 queries: seeded, so always the same.

    A topic here holds about 250 chunks, as in bench_index.py's 40,000; it is the
    crowd of similar chunks, not the size of the vault, that makes search hard."""
    generator = ClusteredVectors(seed=7, topics=10)
    notes = generator.notes(640)
    floats = [array.array("f", v) for _, chunks in notes for v in chunks]
    return floats, generator.queries(20, notes)


def recall_at_10(floats, queries, search) -> float:
    """The share of the exact 10 nearest, by the vectors' float numbers, that `search(query)` (a list of rows) finds."""
    found = 0
    for query in queries:
        exact = {row for _, row in heapq.nlargest(10, ((sum(map(float.__mul__, query, v.tolist())), row)
                                                        for row, v in enumerate(floats)))}
        found += len(exact & set(search(query)))
    return found / (10 * len(queries))


@pytest.mark.slow
@ONE_COPY
def test_sketch_search_finds_what_exact_search_finds(clustered):
    floats, queries = clustered
    chunk_vectors = [vector_search.quantize(v) for v in floats]
    sketches = [vector_search.sketch(v.codes) for v in chunk_vectors]

    def sketched(query):
        return [row for _, row in vector_search.nearest_sketched(query, chunk_vectors, sketches, None, 10)]

    def every_stored_vector(query):
        return [row for _, row in vector_search.nearest_exact(query, chunk_vectors, range(len(chunk_vectors)), 10)]

    def sketch_distance_alone(query):
        query_sketch = vector_search.sketch(vector_search.quantize(query).codes)
        return heapq.nsmallest(10, range(len(sketches)), key=lambda row: (query_sketch ^ sketches[row]).bit_count())

    assert len(chunk_vectors) > 9 * vector_search.SHORTLIST  # scores a ninth of the vectors or fewer exactly
    assert recall_at_10(floats, queries, every_stored_vector) >= 0.98  # what a byte a number costs
    assert recall_at_10(floats, queries, sketched) >= 0.95
    # Not an easy set: the sketch distance alone finds under 80% of the nearest 10.
    assert recall_at_10(floats, queries, sketch_distance_alone) < 0.8


def test_sketch_search_respects_rows_and_skips_removed_ones():
    chunk_vectors = [vector_search.quantize(vector_search.unit_vector([1.0, x, -x])) for x in (0.0, 0.1, 0.2, 0.3)]
    sketches = [vector_search.sketch(v.codes) for v in chunk_vectors] + [vector_search.empty_sketch(3)]
    chunk_vectors.append(None)
    query = [1.0, 0.0, 0.0]  # its sketch is 0: the empty row's would be nearest were it 0 too
    assert [row for _, row in vector_search.nearest_sketched(query, chunk_vectors, sketches, [2, 3, 4], 1, 1)] == [2]
    assert [row for _, row in vector_search.nearest_sketched(query, chunk_vectors, sketches, None, 3, 10)] == [0, 1, 2]


def test_a_built_index_has_its_keyword_postings_at_once(tmp_path):
    index = build(tmp_path)
    assert index._keywords is not None  # a reindex leaves no postings for the first search to build
    fresh = KeywordIndex()
    for row, chunk in live_chunks(index):
        fresh.add(row, index_module.chunk_terms(chunk))
    query = tokenize("starter flour water")
    assert fresh.scores(query) and index.keywords().scores(query) == fresh.scores(query)


def test_the_index_thread_builds_the_keyword_postings_once_the_index_is_ready(tmp_path):
    with step_modules(STEP):
        from vault import Vault
        from vault_index import VaultIndex
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "Rye.md").write_text("# Rye\n\nA dense, sour loaf.\n", encoding="utf-8")
    vault_index = VaultIndex(Vault(tmp_path / "vault"), HashingEmbedder(), tmp_path / "index")
    vault_index.start().join(timeout=60)
    assert vault_index.chunk_index._keywords is not None  # so no hybrid search has to build them


def test_index_nearest_matches_exact_on_a_small_index(tmp_path):
    index = build(tmp_path)
    query = HashingEmbedder().embed_query("starter flour water")
    assert index.nearest(query, 3) == index.nearest(query, 3, exact=True)
    with pytest.raises(ValueError, match="64"):
        index.nearest([1.0, 0.0], 3)
# endregion the sketch search
