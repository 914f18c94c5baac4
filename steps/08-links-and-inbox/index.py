"""The index: every chunk of the vault with its vector, on disk as JSON and in memory for search.

On disk, in a folder of the user's cache (default_index_dir), never in the vault:

    index.json                    the manifest: format version, embedder name and
                                  dimension, and which generation folder is live
    notes-<generation>/
        <sha256 of the note path>.json    one file per note: its chunks and vectors

Why one file per note. Editing a note must cost time in proportion to that note,
not to the vault: re-indexing it replaces its one file, and nothing else is
read or written. A single JSON file would have to be rewritten whole on every
edit: about 80 MB for 40,000 chunks. An append-only log would make edits
cheap too, but then a crash can cut its last line in half, and it needs
compaction now and then; a file per note is simpler, and each one is replaced
atomically (write_json_atomically), so after a crash every file is either the
old version or the new one.

Why generations. A full build (a new vault, a new embedding model) writes a new
notes-<generation>/ folder beside the live one, and only when every note is
written does the manifest switch to it, in one atomic replace. A crash halfway
leaves the old index whole; and files of two models can never mix.

Vectors are quantized to a byte a number and stored as base64 inside the JSON
(vector_search.py), so most of loading is json.loads and base64 decoding, both
done in C, and vectors take a quarter of the room float32 would.

A crash can leave a <name>.json.tmp behind; it is never read, and the next write
of that note replaces it. One process writes an index at a time.

In memory, chunks live in rows: parallel lists of chunk, vector and sketch, so
the hot loop in vector_search.nearest_sketched walks plain lists. A removed chunk
leaves an empty row that the next added chunk reuses. Keyword postings
(keyword_index.py) are filled as a build adds rows, but after a load, not by it,
because tokenizing every chunk takes longer than loading the vectors: the server
has keywords() build them in its index thread right after the load. Searches that
arrive meanwhile wait for them, since building them holds the index's lock.
"""
import contextlib
import functools
import gc
import hashlib
import json
import os
import secrets
import shutil
import sys
import threading
import time
from array import array
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

from keyword_index import KeywordIndex, weighted_terms
from vector_search import SHORTLIST, StoredVector, check_step, decode_codes, empty_sketch, encode_codes, nearest_exact
from vector_search import nearest_sketched, quantize, sketch, unit_vector

FORMAT = 2  # the layout of the files below; a change means a rebuild (1 stored float32)
MANIFEST = "index.json"
EMBED_BATCH = 32  # chunks a build hands the embedder at once; ollama_client.py sends 32 a request
APP_FOLDER = "vault-mcp"


@dataclass(slots=True)  # no __dict__ per chunk: a vault has tens of thousands
class Chunk:
    """One section of a note, as the note parser (step 5) cuts it.

    `text` is exactly what the embedder sees, what keyword search reads, and what
    snippets quote. `heading_path` starts with the note's title, e.g.
    ["Sourdough", "Feeding", "Ratios"]. `folder` is the note's folder inside the
    vault, with forward slashes ("" at the top); `tags` are without "#"."""

    id: str
    path: str
    heading_path: list[str]
    text: str
    title: str
    aliases: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    folder: str = ""


class IndexUnusable(Exception):
    """The index on disk cannot be used as it is. The caller builds a new one."""


class IndexMissing(IndexUnusable):
    """There is no index yet."""


class IndexCorrupt(IndexUnusable):
    """A file of the index cannot be read: bad JSON, a vector of the wrong size, a missing field."""


class IndexStale(IndexUnusable):
    """The index was made by another embedder, dimension or file format."""


def cache_root() -> Path:
    """The user's cache folder, as each system names it."""
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"  # the XDG spec ignores a relative path


def default_index_dir(vault, override=None) -> Path:
    """Where the index of `vault` lives: `override` if given, else a folder in the
    user's cache named by a hash of the vault's absolute path (two vaults never share
    one). Never inside the vault: the index would show up among the notes."""
    vault = Path(vault).resolve()
    if override is not None:
        directory = Path(override).resolve()
    else:
        key = hashlib.sha256(str(vault).encode("utf-8")).hexdigest()[:16]
        directory = cache_root().resolve() / APP_FOLDER / f"index-{key}"
    if directory == vault or vault in directory.parents:
        raise ValueError(f"the index folder {directory} is inside the vault {vault}; choose one outside it")
    return directory


def note_file_name(path: str) -> str:
    """A note's file name: a hash of its path, so any path (slashes, odd characters,
    any length) gives a short name that is valid on every system."""
    return hashlib.sha256(path.encode("utf-8")).hexdigest()[:32] + ".json"


def fsync_directory(directory: Path) -> None:
    """Make a rename in `directory` durable. Windows cannot open a folder for this, and needs not."""
    if sys.platform == "win32":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# region atomic-write
def write_json_atomically(path: Path, data) -> None:
    """Replace `path` with `data` so that a crash leaves either the old file or the new, never half.

    The data goes to a temporary file in the same folder (a rename across file
    systems is not atomic) and is forced to disk before the rename, so the new name
    never points at data still in flight; then the folder is synced, so the rename
    itself survives a power cut."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as file:
        file.write(to_json(data))
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    fsync_directory(path.parent)
# endregion atomic-write


def to_json(data) -> str:
    """Compact JSON text. json.dumps, not json.dump: dump streams through the encoder
    written in Python, dumps uses the one written in C, several times faster."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


# region encode-note
def encode_note(path: str, chunks: list[Chunk], vectors) -> dict:
    return {
        "format": FORMAT,
        "path": path,
        "chunks": [
            {
                "id": chunk.id,
                "heading_path": chunk.heading_path,
                "text": chunk.text,
                "title": chunk.title,
                "aliases": chunk.aliases,
                "tags": chunk.tags,
                "folder": chunk.folder,
                "vector": encode_codes(vector.codes),
                "step": vector.step,
            }
            for chunk, vector in zip(chunks, vectors)
        ],
    }
# endregion encode-note


# region read-note-file
def read_note_file(file: str, dimension: int):
    """(path, chunks, vectors) from one note file; IndexCorrupt says what is wrong with it."""
    try:
        with open(file, "rb", buffering=0) as handle:  # read() takes it whole: a buffer would only copy it
            data = json.loads(handle.read())
        if data["format"] != FORMAT:
            raise ValueError(f"format {data['format']!r}, expected {FORMAT}")
        path = data["path"]
        if os.path.basename(file) != note_file_name(path):
            raise ValueError(f"it holds {path!r}, whose file has another name")
        chunks, vectors = [], []
        for item in data["chunks"]:
            vectors.append(StoredVector(decode_codes(item.pop("vector"), dimension), check_step(item.pop("step"))))
            chunks.append(check_chunk(Chunk(path=path, **item)))
        share_note_fields(chunks)
    # JSONDecodeError is a ValueError; RecursionError is JSON nested too deep for the parser.
    except (OSError, RecursionError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise IndexCorrupt(f"index file {file} is damaged ({error}); rebuild the index") from None
    return path, chunks, vectors
# endregion read-note-file


# region cycle-collector
@contextlib.contextmanager
def cycle_collector_paused():
    """Pause Python's cycle collector for the block, and spare it what the block made. A
    load makes hundreds of thousands of objects that all stay, in no cycle: the collector
    would walk them again and again and free none. gc.freeze puts every object there is
    where no collection looks; one that goes later is still freed by its reference count,
    unless it is caught in a cycle. So the freeze is kept to what must stay: first the
    collector gets back what an earlier load froze and frees every cycle already dropped
    (before a load the heap is small, and this is quick), and what is frozen at the end is
    the index, the modules, and the few objects of answers under way at that moment."""
    was_enabled = gc.isenabled()
    gc.unfreeze()
    gc.collect()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if was_enabled:
            gc.enable()
# endregion cycle-collector


def share_note_fields(chunks: list[Chunk]) -> None:
    """Let the chunks of one note share one copy of what they have in common, as a
    build's chunks do: JSON gives every chunk its own title, lists and folder."""
    first = chunks[0] if chunks else None
    for chunk in chunks[1:]:
        if chunk.title == first.title:
            chunk.title = first.title
        if chunk.aliases == first.aliases:
            chunk.aliases = first.aliases
        if chunk.tags == first.tags:
            chunk.tags = first.tags
        if chunk.folder == first.folder:
            chunk.folder = first.folder
    for chunk in chunks:
        if chunk.heading_path[:1] == [chunk.title]:
            chunk.heading_path[0] = chunk.title


def check_chunk(chunk: Chunk) -> Chunk:
    """The chunk, if every field has the type search reads it as: text, or a list of texts.
    A damaged file must fail here, at load, not in every search that meets the chunk."""
    for name in ("id", "text", "title", "folder"):
        if not isinstance(getattr(chunk, name), str):
            raise ValueError(f"a chunk's {name} is {type(getattr(chunk, name)).__name__}, not text")
    for name in ("heading_path", "aliases", "tags"):
        value = getattr(chunk, name)
        if not isinstance(value, list) or not all(map(isinstance, value, repeat(str))):
            raise ValueError(f"a chunk's {name} is not a list of texts")
    return chunk


# region sync-folder
def sync_folder(folder: Path) -> None:
    """Force every file of a freshly written folder to disk. On Linux one os.sync() does
    it, and waits until it is done; thousands of fsyncs, one per note, take far longer.
    POSIX lets sync() return before the writing is done, as macOS's does, so other
    systems sync file by file."""
    if sys.platform.startswith("linux"):
        os.sync()
    else:
        for file in folder.iterdir():
            with open(file, "rb+") as handle:
                os.fsync(handle.fileno())
    fsync_directory(folder)
# endregion sync-folder


# region manifest
def read_manifest(directory: Path) -> dict:
    file = directory / MANIFEST
    try:
        manifest = json.loads(file.read_bytes())
    except FileNotFoundError:
        raise IndexMissing(f"there is no index in {directory} yet") from None
    except (OSError, RecursionError, ValueError) as error:  # a folder in its place, JSON nested too deep...
        raise IndexCorrupt(f"index manifest {file} is damaged ({error}); rebuild the index") from None
    generation = manifest.get("generation") if isinstance(manifest, dict) else None
    # The generation names a folder beside the manifest, and nothing else.
    if (not isinstance(generation, str) or not generation.startswith("notes-") or len(generation) > 64
            or Path(generation).name != generation):
        raise IndexCorrupt(f"index manifest {file} names no valid notes folder; rebuild the index")
    return manifest


def check_made_by(manifest: dict, embedder_name: str, dimension: int) -> None:
    """IndexStale unless the index was made by this file format, embedder and dimension."""
    if manifest.get("format") != FORMAT:
        raise IndexStale(f"the index has file format {manifest.get('format')!r}, this code reads {FORMAT}; rebuild it")
    made_by = (manifest.get("embedder"), manifest.get("dimension"))
    if made_by != (embedder_name, dimension):
        raise IndexStale(
            f"the index was made by {made_by[0]!r} ({made_by[1]} dimensions), the embedder now is "
            f"{embedder_name!r} ({dimension} dimensions); rebuild it"
        )
# endregion manifest


def remove_other_generations(directory: Path, keep: str) -> None:
    for entry in directory.iterdir():
        if entry.is_dir() and entry.name.startswith("notes-") and entry.name != keep:
            shutil.rmtree(entry, ignore_errors=True)


# Both keys are computed for every chunk as an index loads, from the few hundred folders
# and tags a vault has: remembering them takes a tenth off the load.
@functools.lru_cache(maxsize=4096)
def folder_key(folder: str) -> str:
    """A folder as filters compare it: forward slashes, no slash at either end, case folded."""
    return folder.replace("\\", "/").strip().strip("/").casefold()


@functools.lru_cache(maxsize=4096)
def tag_key(tag: str) -> str:
    """A tag as filters compare it: without "#", case folded (Obsidian ignores the case of tags)."""
    return tag.strip().lstrip("#").casefold()


def chunk_terms(chunk: Chunk):
    return weighted_terms(chunk.title, chunk.aliases, chunk.heading_path, chunk.tags, chunk.text)


def group_by_note(chunks) -> dict[str, list[Chunk]]:
    notes: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        notes.setdefault(chunk.path, []).append(chunk)
    return notes


# region embed-batches
def stored_vectors(vectors) -> list[StoredVector]:
    """The embedder's vectors scaled to length 1 and quantized, as the index keeps them."""
    return [quantize(unit_vector(vector)) for vector in vectors]


def embed_batches(batches, embedder):
    """(path, chunks, stored vectors) for each note of `batches` (see note_batches),
    each batch embedded in one call."""
    for batch in batches:
        texts = [chunk.text for _, chunks in batch for chunk in chunks]
        vectors = stored_vectors(embedder.embed_documents(texts) if texts else [])
        for path, chunks in batch:
            yield path, chunks, vectors[: len(chunks)]
            vectors = vectors[len(chunks) :]
# endregion embed-batches


def note_batches(notes: dict[str, list[Chunk]], size: int):
    """The notes in groups of as many as fit in `size` chunks (a note with more is a group
    of its own), so that a build sends the embedder nearly full batches although most
    notes have only a few chunks: with Ollama, a request for about every 30 chunks
    rather than one for every note."""
    batch, count = [], 0
    for path, chunks in notes.items():
        if batch and count + len(chunks) > size:
            yield batch
            batch, count = [], 0
        batch.append((path, chunks))
        count += len(chunks)
    if batch:
        yield batch


class ChunkIndex:
    """The chunks of one vault with their vectors: on disk in `directory`, in memory for search.

    Get one with ChunkIndex.load (an existing index), ChunkIndex.build (a new one from all
    chunks) or ChunkIndex.write_new (from notes embedded elsewhere); keep it current with
    update_note and remove_note. Every method holds `lock`, and search.py holds it
    for a whole search, so a server can search from several threads while another
    updates. One process writes an index at a time."""

    def __init__(self, directory, embedder_name: str, dimension: int, generation: str):
        self.directory = Path(directory)
        self.embedder_name = embedder_name
        self.dimension = dimension
        self.generation = generation
        self.shortlist = SHORTLIST
        self.lock = threading.RLock()
        # Rows: row r holds chunks[r], vectors[r] (a StoredVector) and sketches[r]; an empty row
        # holds None, None and a sketch no query comes near (see vector_search.empty_sketch).
        self.empty_sketch = empty_sketch(dimension)
        self.chunks: list[Chunk | None] = []
        self.vectors: list = []
        self.sketches: list[int] = []
        self.free_rows: list[int] = []
        self.rows_by_note: dict[str, list[int]] = {}
        # Folder or tag -> its rows, in an array of 4-byte numbers: a set would take ten times the room.
        self.rows_by_folder: dict[str, array] = {}
        self.rows_by_tag: dict[str, array] = {}
        self._keywords: KeywordIndex | None = None  # built on first use, see keywords()

    @property
    def notes_dir(self) -> Path:
        return self.directory / self.generation

    def __len__(self) -> int:
        """The number of chunks."""
        return len(self.chunks) - len(self.free_rows)

    def note_paths(self) -> list[str]:
        with self.lock:
            return list(self.rows_by_note)

    # region load
    @classmethod
    def load(cls, directory, embedder_name: str, dimension: int) -> "ChunkIndex":
        """The index stored in `directory`. Raises an IndexUnusable when it is missing,
        damaged, or made by another embedder: then build a new one."""
        directory = Path(directory)
        manifest = read_manifest(directory)
        check_made_by(manifest, embedder_name, dimension)
        index = cls(directory, embedder_name, dimension, manifest["generation"])
        if not index.notes_dir.is_dir():
            raise IndexCorrupt(f"index folder {index.notes_dir} is missing; rebuild the index")
        with cycle_collector_paused():
            for entry in os.scandir(index.notes_dir):  # plain strings: pathlib would add a tenth to the load
                if not entry.name.endswith(".json"):  # a leftover .json.tmp of a crash is not read
                    continue
                if not entry.is_file(follow_symlinks=False):  # never written here; a FIFO would block the read
                    raise IndexCorrupt(f"{entry.path} is not a file; rebuild the index")
                path, chunks, vectors = read_note_file(entry.path, dimension)
                index._add_rows(path, chunks, vectors)
    # endregion load
        return index

    @classmethod
    def build(cls, directory, embedder, chunks, progress=None, started=None) -> "ChunkIndex":
        """Embed every chunk and write a new index into `directory`, replacing any old one.

        `progress(notes_done, notes_total)` is called as notes are done, e.g. with a
        ProgressLine. The old index stays whole until the new one is complete.
        `started(index)` is handed the new index before its first note, so that a
        server can search what is built so far."""
        notes = group_by_note(chunks)
        embedded = embed_batches(note_batches(notes, EMBED_BATCH), embedder)
        return cls.write_new(directory, embedder, embedded, len(notes), progress, started)

    # region write-new
    @classmethod
    def write_new(cls, directory, embedder, embedded, total: int, progress=None, started=None) -> "ChunkIndex":
        """A new index in `directory` from `embedded`, which yields (path, chunks, stored
        vectors) for each of `total` notes: embedded here (build) or by worker processes
        (parallel_build.py). Only this process writes: the files of a new generation
        folder, then the manifest that switches to it. If anything fails on the way, the
        folder is removed and the old index stays as it was."""
        directory = Path(directory)
        generation = f"notes-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        index = cls(directory, embedder.name, embedder.dimension, generation)
        index._keywords = KeywordIndex()  # filled as rows are added: a new index has its postings at once
        index.notes_dir.mkdir(parents=True)
        if started:  # searches may read the index as it grows: each note is added whole, under the lock
            started(index)
        try:
            if progress:
                progress(0, total)
            for done, (path, chunks, vectors) in enumerate(embedded, 1):
                index._check_vectors(chunks, vectors)
                if chunks:  # no fsync per file here: sync_folder makes them all durable at once
                    with open(index.notes_dir / note_file_name(path), "w", encoding="utf-8") as file:
                        file.write(to_json(encode_note(path, chunks, vectors)))
                    with index.lock:
                        index._add_rows(path, chunks, vectors)
                if progress:
                    progress(done, total)
            sync_folder(index.notes_dir)
        except BaseException:
            shutil.rmtree(index.notes_dir, ignore_errors=True)
            raise
        manifest = {"format": FORMAT, "embedder": embedder.name, "dimension": embedder.dimension}
        write_json_atomically(directory / MANIFEST, manifest | {"generation": generation})  # the switch
        remove_other_generations(directory, generation)
        return index
    # endregion write-new

    def update_note(self, path: str, chunks: list[Chunk], vectors) -> None:
        """Replace all the index holds of one note with these chunks and their vectors
        (embedder.embed_documents of their texts). Writes that note's file, no other."""
        if not chunks:
            return self.remove_note(path)
        if any(chunk.path != path for chunk in chunks):
            raise ValueError(f"every chunk given for {path!r} must have that path")
        vectors = self._stored_vectors(chunks, vectors)
        with self.lock:  # the file first: if writing fails, memory still matches the disk
            write_json_atomically(self.notes_dir / note_file_name(path), encode_note(path, chunks, vectors))
            self._remove_rows(path)
            self._add_rows(path, chunks, vectors)

    def remove_note(self, path: str) -> None:
        with self.lock:
            file = self.notes_dir / note_file_name(path)
            if file.exists():
                file.unlink()
                fsync_directory(self.notes_dir)
            self._remove_rows(path)

    def _stored_vectors(self, chunks, vectors) -> list[StoredVector]:
        """The embedder's vectors scaled to length 1 and quantized, after checking that
        there is one of the right size per chunk."""
        stored = stored_vectors(vectors)
        self._check_vectors(chunks, stored)
        return stored

    def _check_vectors(self, chunks, vectors) -> None:
        if len(vectors) != len(chunks):
            raise ValueError(f"{len(vectors)} vectors for {len(chunks)} chunks")
        for vector in vectors:
            if len(vector.codes) != self.dimension:
                raise ValueError(f"a vector has {len(vector.codes)} numbers, the index holds {self.dimension}")

    def _add_rows(self, path: str, chunks: list[Chunk], vectors: list) -> None:
        rows = []
        for chunk, vector in zip(chunks, vectors):
            if self.free_rows:
                row = self.free_rows.pop()
            else:
                row = len(self.chunks)
                self.chunks.append(None)
                self.vectors.append(None)
                self.sketches.append(self.empty_sketch)
            self.chunks[row], self.vectors[row], self.sketches[row] = chunk, vector, sketch(vector.codes)
            self.rows_by_folder.setdefault(folder_key(chunk.folder), array("I")).append(row)
            for tag in chunk.tags:
                self.rows_by_tag.setdefault(tag_key(tag), array("I")).append(row)
            if self._keywords is not None:
                self._keywords.add(row, chunk_terms(chunk))
            rows.append(row)
        self.rows_by_note[path] = rows

    def _remove_rows(self, path: str) -> None:
        for row in self.rows_by_note.pop(path, []):
            chunk = self.chunks[row]
            self._forget(self.rows_by_folder, folder_key(chunk.folder), row)
            for tag in chunk.tags:
                self._forget(self.rows_by_tag, tag_key(tag), row)
            if self._keywords is not None:
                self._keywords.remove(row, chunk_terms(chunk))
            self.chunks[row], self.vectors[row], self.sketches[row] = None, None, self.empty_sketch
            self.free_rows.append(row)

    @staticmethod
    def _forget(groups: dict[str, array], key: str, row: int) -> None:
        members = groups.get(key)
        if members is not None and row in members:
            members.remove(row)
            if not members:
                del groups[key]

    def rows_matching(self, folder: str | None = None, tag: str | None = None) -> set[int] | None:
        """The rows in `folder` or a folder inside it, and with `tag` or a tag nested
        under it ("a" matches "a/b"); None when neither filter is given."""
        selected = None
        with self.lock:
            if folder and folder_key(folder):
                selected = self._rows_under(self.rows_by_folder, folder_key(folder))
            if tag and tag_key(tag):
                tagged = self._rows_under(self.rows_by_tag, tag_key(tag))
                selected = tagged if selected is None else selected & tagged
        return selected

    @staticmethod
    def _rows_under(groups: dict[str, array], key: str) -> set[int]:
        rows = set()
        for name, members in groups.items():  # one entry per folder or tag, not per chunk
            if name == key or name.startswith(key + "/"):
                rows.update(members)
        return rows

    def nearest(self, query_vector, k: int, rows=None, exact: bool = False) -> list[tuple[float, int]]:
        """The k chunks most similar to the query vector, as (cosine, row), best first;
        only among `rows` if given. exact=True scores every chunk (for tests and benchmarks)."""
        if len(query_vector) != self.dimension:
            raise ValueError(f"the query vector has {len(query_vector)} numbers, the index holds {self.dimension}")
        query = unit_vector(query_vector).tolist()  # a list multiplies a little faster than an array
        with self.lock:
            if rows is not None:
                rows = sorted(rows)
            if exact:
                live = rows if rows is not None else [r for r, v in enumerate(self.vectors) if v is not None]
                return nearest_exact(query, self.vectors, live, k)
            return nearest_sketched(query, self.vectors, self.sketches, rows, k, self.shortlist)

    def keywords(self) -> KeywordIndex:
        """The BM25 postings, built from the chunks the first time they are needed.

        That takes a while on a large vault (seconds for 40,000 chunks), and searches
        wait for it, so vault_index.py calls it right after the load, in its thread."""
        with self.lock:
            if self._keywords is None:
                keywords = KeywordIndex()
                for row, chunk in enumerate(self.chunks):
                    if chunk is not None:
                        keywords.add(row, chunk_terms(chunk))
                self._keywords = keywords
            return self._keywords


class ProgressLine:
    """Shows a build's progress on one line of stderr: notes done, rate, time left.

    Pass it as ChunkIndex.build(..., progress=ProgressLine()). On a terminal the line is
    rewritten in place a few times a second; in a log, a new line every few seconds."""

    def __init__(self, stream=None, clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.interactive = getattr(self.stream, "isatty", lambda: False)()
        self.interval = 0.2 if self.interactive else 5.0
        self.started = self.shown = None

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self.started is None:
            self.started = now
        elapsed = now - self.started
        if done >= total:
            rate = f", {done / elapsed:.1f} notes/s" if elapsed > 0 else ""
            self._show(f"indexed {total} notes in {format_seconds(elapsed)}{rate}", end="\n")
        elif self.shown is None or now - self.shown >= self.interval:
            self.shown = now
            if done and elapsed > 0:
                rate = done / elapsed
                self._show(f"indexing: {done}/{total} notes, {rate:.1f} notes/s, "
                           f"about {format_seconds((total - done) / rate)} left")
            else:
                self._show(f"indexing: {done}/{total} notes")

    def _show(self, line: str, end: str | None = None) -> None:
        if self.interactive:
            self.stream.write("\r" + line.ljust(72) + (end or ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
