"""The index: every chunk of the vault with its vector, on disk as JSON and in memory for search.

On disk, in a folder of the user's cache (default_index_dir), never in the vault:

    index.json                    the manifest: format version, embedder name and
                                  dimension, and which generation folder is live
    notes-<generation>/
        <sha256 of the note path>.json    one file per note: its chunks and vectors,
                                          and the meta its writer gave (reconcile.py
                                          keeps the note's size and time there, and
                                          its links); in a second line, the texts and
                                          the links' context lines (encode_note)
        keywords.postings         the keyword postings, for the next load
                                  (stored_keywords.py)

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
the hot loop in vector_search.nearest_sketched walks plain lists. A chunk in memory
has no text where its note's file holds it (texts_of): texts are most of a vault's
size, and a search reads only those of the few hits it shows. A removed chunk
leaves an empty row that the next added chunk reuses. Keyword postings
(keyword_index.py) are filled as a build adds rows. A load takes them from the copy
stored beside the notes if it fits them (stored_keywords.py); if not, the server has
keywords() build them from the chunks in its index thread right after the load, since
tokenizing every chunk takes longer than loading the vectors. Searches that arrive
meanwhile wait for them, since building them holds the index's lock.
"""
import contextlib
import dataclasses
import functools
import gc
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import sys
import threading
import time
import zlib
from array import array
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import stored_keywords
from keyword_index import KeywordIndex, weighted_terms
from vector_search import MAX_STEP, SHORTLIST, StoredVector, check_step, decode_codes, empty_sketch, encode_codes, nearest_exact
from vector_search import nearest_sketched, quantize, sketch, unit_vector

FORMAT = 3  # the layout of the files below; a change means a rebuild (1 stored float32, 2 one line)
MANIFEST = "index.json"
EMBED_BATCH = 32  # chunks a build hands the embedder at once; ollama_client.py sends 32 a request
APP_FOLDER = "vault-mcp"
WRITER_LOCK = "writer.lock"  # in an embedder's folder: held by the one server that writes that index
LAST_USED = "last-used"  # in an embedder's folder: its time says when a server last opened that index
KEEP_EMBEDDERS = 2  # the indexes kept in a vault's folder: the one in use and the last other one
LINKS = "links"  # the key of a note's meta that holds its links: stored, not kept in memory (_keep_meta)
CONTEXTS = "contexts"  # where links.entry_to_store puts the links' context lines; the second line here
NOTE_FIELDS = {"title": str, "aliases": list, "tags": list, "folder": str}  # what a note's chunks share
CHUNK_TYPES = (str, list, str, float)  # a chunk in a note's file: [id, heading_path, vector, step]

log = logging.getLogger("index")


@dataclass(slots=True)  # no __dict__ per chunk: a vault has tens of thousands
class Chunk:
    """One section of a note, as the note parser (step 5) cuts it.

    `text` is exactly what the embedder sees, what keyword search reads, and what
    snippets quote; None in the memory of an index that keeps it in the note's file
    (ChunkIndex.texts_of). `heading_path` starts with the note's title, e.g.
    ["Sourdough", "Feeding", "Ratios"]. `folder` is the note's folder inside the
    vault, with forward slashes ("" at the top); `tags` are without "#"."""

    id: str
    path: str
    heading_path: list[str]
    text: str | None
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


class BuildStopped(Exception):
    """A rebuild stopped before its end because its request was cancelled."""


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


# region embedder-folders
def embedder_folder(vault_folder: Path, embedder_name: str) -> Path:
    """The folder of one embedder's index inside the vault's index folder: a readable
    name, and a hash of the embedder's name so that no two embedders share one."""
    readable = re.sub(r"[^a-z0-9]+", "-", embedder_name.lower()).strip("-")[:40] or "embedder"
    return Path(vault_folder) / f"{readable}-{hashlib.sha256(embedder_name.encode('utf-8')).hexdigest()[:8]}"


def open_embedder_folder(vault_folder, embedder_name: str) -> Path:
    """The index folder of this embedder, marked as the latest used; the indexes of other
    embedders are kept, up to KEEP_EMBEDDERS in all, the most recently used first. A server
    started without Ollama builds the offline table's index beside Ollama's and removes
    neither, so the next start with Ollama loads its own, with nothing embedded again."""
    vault_folder = Path(vault_folder)
    move_single_index(vault_folder)
    folder = embedder_folder(vault_folder, embedder_name)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / LAST_USED).touch()  # its time now says: the latest used
    others = [entry for entry in vault_folder.iterdir()
              if entry.is_dir() and entry != folder and (entry / LAST_USED).is_file()]
    others.sort(key=lambda entry: (entry / LAST_USED).stat().st_mtime, reverse=True)
    for old in others[KEEP_EMBEDDERS - 1:]:
        lock = writer_lock(old)
        if lock is None:  # a server is using it right now
            continue
        lock.close()
        log.info("index: removing %s, the index of an embedder not used lately", old.name)
        shutil.rmtree(old, ignore_errors=True)
    return folder


def move_single_index(vault_folder: Path) -> None:
    """An index of the single-index layout (a manifest and its generation in the vault's
    folder itself) moves into its embedder's folder, so that it is loaded, not rebuilt.
    The generation moves first: a stop between the two moves leaves the manifest where
    this looks, and the next start finishes the move."""
    try:
        manifest = read_manifest(vault_folder)
    except IndexUnusable:  # none there: the usual case; a damaged one is left for a rebuild
        return
    if not isinstance(manifest.get("embedder"), str):
        return
    folder = embedder_folder(vault_folder, manifest["embedder"])
    if (folder / MANIFEST).exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    generation = vault_folder / manifest["generation"]
    try:
        if generation.is_dir():
            os.replace(generation, folder / manifest["generation"])
        os.replace(vault_folder / MANIFEST, folder / MANIFEST)
    except FileNotFoundError:  # another server, started at the same moment, moved it first
        return
    log.info("index: moved the index of %r into %s", manifest["embedder"], folder.name)
# endregion embedder-folders


# region one-writer
def writer_lock(folder: Path):
    """The lock that makes this process the one that writes the index in `folder`, held
    while the returned file stays open; None if another process holds it. The system
    lets it go when the process ends, however it ends, so no stale lock is left."""
    handle = open(Path(folder) / WRITER_LOCK, "a+b")
    try:
        if sys.platform == "win32":
            import msvcrt
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle
# endregion one-writer


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


def write_json_atomically(path: Path, data) -> None:
    """Replace `path` with `data` as JSON, atomically (write_atomically)."""
    write_atomically(path, lambda file: file.write(to_json(data).encode("utf-8")))


def write_note_file(path: Path, data: bytes) -> None:
    """Replace a note's file with `data` (encode_note), atomically (write_atomically)."""
    write_atomically(path, lambda file: file.write(data))


def write_atomically(path: Path, write):
    """Replace `path` with what write(file) writes into a file opened for bytes, so that a
    crash leaves either the old file or the new, never half; returns what write returns.

    The data goes to a temporary file in the same folder (a rename across file
    systems is not atomic) and is forced to disk before the rename, so the new name
    never points at data still in flight; then the folder is synced, so the rename
    itself survives a power cut. A write that fails (a full disk) removes what it wrote."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        with open(temporary, "wb") as file:
            result = write(file)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    os.replace(temporary, path)
    fsync_directory(path.parent)
    return result


def to_json(data) -> str:
    """Compact JSON text. json.dumps, not json.dump: dump streams through the encoder
    written in Python, dumps uses the one written in C, several times faster."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


# region note-file
def encode_note(path: str, chunks: list[Chunk], vectors, meta: dict | None = None) -> bytes:
    """A note's file: two lines of JSON. The first holds what a load reads: the meta, what
    the note's chunks share (its title, aliases, tags and folder), and each chunk as a list
    [id, heading_path, vector, step]. The second holds what only answers read: the chunks'
    texts, and the context line of each link stored in the meta (links.py). A load decodes
    the first line only, and checks the second against the CRC-32 the first holds. (JSON
    writes a newline inside a text as \\n.)"""
    meta = dict(meta or {})
    contexts = []
    if LINKS in meta:
        meta[LINKS] = dict(meta[LINKS])
        contexts = meta[LINKS].pop(CONTEXTS, [])
    rest = to_json({"path": path, "texts": [chunk.text for chunk in chunks], CONTEXTS: contexts}).encode("utf-8")
    shared = [[chunk.title, chunk.aliases, chunk.tags, chunk.folder] for chunk in chunks]
    if any(fields != shared[0] for fields in shared):
        raise ValueError(f"the chunks of {path!r} differ in title, aliases, tags or folder")
    first = {
        "format": FORMAT,
        "path": path,
        "meta": meta,
        "rest": zlib.crc32(rest),
        "note": dict(zip(NOTE_FIELDS, shared[0])) if chunks else None,
        "chunks": [[chunk.id, chunk.heading_path, encode_codes(vector.codes), vector.step]
                   for chunk, vector in zip(chunks, vectors)],
    }
    return to_json(first).encode("utf-8") + b"\n" + rest


def read_note_file(file: str, dimension: int, keep_texts: bool = True):
    """(path, chunks, vectors, meta) from one note file; IndexCorrupt says what is wrong with it.
    Without keep_texts, the second line is checked and left in the file (stored_rest):
    the chunks' texts are None, and the links in the meta have no contexts."""
    try:
        with open(file, "rb", buffering=0) as handle:  # read() takes it whole: a buffer would only copy it
            first, _, rest = handle.read().partition(b"\n")
        data = json.loads(first)
        if data["format"] != FORMAT:
            raise ValueError(f"format {data['format']!r}, expected {FORMAT}")
        path = data["path"]
        if os.path.basename(file) != note_file_name(path):
            raise ValueError(f"it holds {path!r}, whose file has another name")
        if data["rest"] != zlib.crc32(rest):
            raise ValueError("its second line is not the one written with the first")
        meta = data.get("meta", {})  # a file written before meta existed has none
        if not isinstance(meta, dict):
            raise ValueError(f"its meta is {type(meta).__name__}, not an object")
        chunks, vectors = [], []
        if data["chunks"]:
            title, aliases, tags, folder = note_fields(data["note"])
            for item in data["chunks"]:
                chunk_id, heading_path, vector, step = chunk_fields(item)
                if heading_path[:1] == [title]:
                    heading_path[0] = title  # one copy of the title, shared
                vectors.append(StoredVector(decode_codes(vector, dimension), step))
                chunks.append(Chunk(chunk_id, path, heading_path, None, title, aliases, tags, folder))
        if keep_texts:
            kept = decode_rest(rest, path)
            if len(kept["texts"]) != len(chunks):
                raise ValueError(f"{len(kept['texts'])} texts for {len(chunks)} chunks")
            for chunk, text in zip(chunks, kept["texts"]):
                chunk.text = text
            if isinstance(meta.get(LINKS), dict):
                meta[LINKS][CONTEXTS] = kept[CONTEXTS]
    # JSONDecodeError is a ValueError; RecursionError is JSON nested too deep for the parser.
    except (OSError, RecursionError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise IndexCorrupt(f"index file {file} is damaged ({error}); rebuild the index") from None
    return path, chunks, vectors, meta
# endregion note-file


def note_fields(note) -> tuple:
    """What a note's chunks share, checked: search reads each as text or a list of texts.
    A damaged file must fail here, at load, not in every search that meets the note."""
    values = tuple(note[name] for name in NOTE_FIELDS)
    for name, value in zip(NOTE_FIELDS, values):
        if NOTE_FIELDS[name] is str and type(value) is not str:
            raise ValueError(f"its {name} is {type(value).__name__}, not text")
        if NOTE_FIELDS[name] is list and (type(value) is not list or not all(map(isinstance, value, repeat(str)))):
            raise ValueError(f"its {name} is not a list of texts")
    return values


def chunk_fields(item) -> list:
    """A stored chunk, [id, heading_path, vector, step], checked. One comparison of types
    in C for the usual chunk (a load checks tens of thousands); a closer look says what is
    wrong with a damaged one."""
    if type(item) is list and tuple(map(type, item)) == CHUNK_TYPES and all(map(isinstance, item[1], repeat(str))):
        if 0 <= item[3] <= MAX_STEP:  # NaN is not
            return item
    if type(item) is not list or len(item) != len(CHUNK_TYPES):
        raise ValueError("a chunk is not [id, heading_path, vector, step]")
    chunk_id, heading_path, vector, step = item
    if type(chunk_id) is not str:
        raise ValueError(f"a chunk's id is {type(chunk_id).__name__}, not text")
    if type(heading_path) is not list or not all(map(isinstance, heading_path, repeat(str))):
        raise ValueError("a chunk's heading_path is not a list of texts")
    if type(vector) is not str:
        raise ValueError(f"a chunk's vector is {type(vector).__name__}, not text")
    check_step(step)  # says what is wrong with it
    raise ValueError("a chunk is damaged")


def decode_rest(rest: bytes, path: str) -> dict:
    """A note file's second line, checked: {"path", "texts", "contexts"}."""
    data = json.loads(rest)
    texts, contexts = data["texts"], data[CONTEXTS]
    if data["path"] != path:
        raise ValueError(f"its second line holds {data['path']!r}")
    for values in (texts, contexts):  # a text read as a list of texts would give its letters
        if type(values) is not list or not all(map(isinstance, values, repeat(str))):
            raise ValueError("its texts or contexts are not a list of texts")
    return data


def note_entries(folder: Path, order: dict[str, int]) -> list[os.DirEntry]:
    """The note files of a generation folder (plain strings: pathlib would add a tenth to
    the load), the notes `order` places first, in its order (stored_keywords.py)."""
    names = {note_file_name(path): place for path, place in order.items()}
    entries = [entry for entry in os.scandir(folder) if entry.name.endswith(".json")]  # not a crash's .json.tmp
    return sorted(entries, key=lambda entry: names.get(entry.name, len(names)))


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


def has_whole_index(directory: Path, embedder_name: str, dimension: int) -> bool:
    """True if `directory` holds a whole index of this embedder, which a rebuild must not
    touch until the new one replaces it."""
    try:
        manifest = read_manifest(directory)
        check_made_by(manifest, embedder_name, dimension)
    except IndexUnusable:
        return False
    return manifest.get("complete", True) is not False and (directory / manifest["generation"]).is_dir()


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


def chunk_terms(chunk: Chunk, text: str | None = None):
    """The chunk's weighted terms; `text` is its text where memory does not hold it."""
    return weighted_terms(chunk.title, chunk.aliases, chunk.heading_path, chunk.tags,
                          chunk.text if text is None else text)


def group_by_note(chunks) -> dict[str, list[Chunk]]:
    notes: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        notes.setdefault(chunk.path, []).append(chunk)
    return notes


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
    update_note and remove_note. A note may carry a small `meta` dict, stored in
    its file, that the index keeps but never reads: reconcile.py records there what
    the note's file looked like when it was indexed. A note stored with meta but no
    chunks (an empty note) has a file, so its meta is kept, but no rows: it is not
    among note_paths. Every method holds `lock`, and search.py holds it for a whole
    search, so a server can search from several threads while another updates. One
    process writes an index at a time."""

    def __init__(self, directory, embedder_name: str, dimension: int, generation: str):
        self.directory = Path(directory)
        self.embedder_name = embedder_name
        self.dimension = dimension
        self.generation = generation
        self.shortlist = SHORTLIST
        self.lock = threading.RLock()
        self.saving = threading.Lock()
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
        self.meta_by_note: dict[str, dict] = {}  # every note that has a file, with its meta ({} if none)
        self._keywords: KeywordIndex | None = None  # built on first use, see keywords()
        self.writes = 0  # note files written since the load or build
        self.complete = True  # False for a first build cut short, until reconcile has added the rest
        self.writable = True  # False where another server writes this folder: changes stay in memory
        self.embedder = None  # the embedder whose vectors these are, which must embed the queries
        self.keywords_stored: int | None = None  # the value of writes when the postings were last stored
        self.on_links = None  # see _keep_meta

    @property
    def notes_dir(self) -> Path:
        return self.directory / self.generation

    def __len__(self) -> int:
        """The number of chunks."""
        return len(self.chunks) - len(self.free_rows)

    def note_paths(self) -> list[str]:
        with self.lock:
            return list(self.rows_by_note)

    def note_meta(self) -> dict[str, dict]:
        """Every note the index has a file for, with the meta stored with it ({} if none was)."""
        with self.lock:
            return {path: dict(meta) for path, meta in self.meta_by_note.items()}

    def meta_of(self, path: str) -> dict | None:
        """The meta stored with one note; None if the index has no file for it."""
        with self.lock:
            meta = self.meta_by_note.get(path)
            return None if meta is None else dict(meta)

    def chunks_of(self, path: str) -> list[Chunk]:
        """The chunks the index holds for one note, in order, with their texts; [] if none."""
        with self.lock:
            rows = self.rows_by_note.get(path, [])
            texts = self.texts_of(rows)
            return [dataclasses.replace(self.chunks[row], text=texts[row]) for row in rows]

    @classmethod
    def load(cls, directory, embedder_name: str, dimension: int, writable: bool = True,
             on_links=None) -> "ChunkIndex":
        """The index stored in `directory`. Raises an IndexUnusable when it is missing,
        damaged, or made by another embedder: then build a new one. Not `writable` (another
        server writes the folder and may replace its files), it keeps the texts in memory.
        on_links(path, links) is handed the links stored in each note's meta (_keep_meta)."""
        directory = Path(directory)
        manifest = read_manifest(directory)
        check_made_by(manifest, embedder_name, dimension)
        index = cls(directory, embedder_name, dimension, manifest["generation"])
        index.complete = manifest.get("complete", True) is not False
        index.writable, index.on_links = writable, on_links
        if not index.notes_dir.is_dir():
            raise IndexCorrupt(f"index folder {index.notes_dir} is missing; rebuild the index")
        with cycle_collector_paused():
            copy = stored_keywords.read_copy(index.notes_dir)
            stamps = {}
            for entry in note_entries(index.notes_dir, stored_keywords.note_order(copy)):
                if not entry.is_file(follow_symlinks=False):  # never written here; a FIFO would block the read
                    raise IndexCorrupt(f"{entry.path} is not a file; rebuild the index")
                try:
                    path, chunks, vectors, meta = read_note_file(entry.path, dimension, keep_texts=not writable)
                except IndexCorrupt:
                    if index.complete:
                        raise
                    os.unlink(entry.path)  # the note a stop cut in half: reconcile embeds it again
                    continue
                stamps[path] = stored_keywords.file_stamp(entry.inode(), entry.stat(follow_symlinks=False))
                index._add_rows(path, chunks, vectors)
                index._keep_meta(path, meta)
            index.use_stored_keywords(copy, stamps)
        index.on_links = None  # from now on, who stores a note's links holds them already
        return index

    @classmethod
    def build(cls, directory, embedder, chunks, progress=None, meta: dict[str, dict] | None = None,
              started=None) -> "ChunkIndex":
        """Embed every chunk and write a new index into `directory`, replacing any old one.

        `progress(notes_done, notes_total)` is called as notes are done, e.g. with a
        ProgressLine. The old index stays whole until the new one is complete.
        `meta` maps a note's path to the meta stored with it; a note it names that
        has no chunks (an empty note) is stored too, so that its meta is kept.
        `started(index)` is handed the new index before its first note, so that a
        server can search what is built so far."""
        meta = meta or {}
        notes = group_by_note(chunks)
        for path in meta:
            notes.setdefault(path, [])
        embedded = embed_batches(note_batches(notes, EMBED_BATCH), embedder)
        with_meta = ((path, chunks, vectors, meta.get(path, {})) for path, chunks, vectors in embedded)
        return cls.write_new(directory, embedder, with_meta, len(notes), progress, started)

    @classmethod
    def write_new(cls, directory, embedder, embedded, total: int, progress=None, started=None,
                  stop=None, writable: bool = True, finished=None, on_links=None) -> "ChunkIndex":
        """A new index in `directory` from `embedded`, which yields (path, chunks, stored
        vectors, meta) for each of `total` notes: embedded here (build) or by worker
        processes (parallel_build.py); a note whose meta is None and has no chunks is
        not stored. Only this process writes: the files of a new generation folder, then
        the manifest that switches to it. If anything fails on the way, the folder is
        removed and the old index stays as it was; so when `stop`, an Event, is set: it is
        looked at before each note. Not `writable` (another server writes the folder), it
        is built in memory only. `finished(index)` is handed the index once it is whole, before
        the generation it replaces is removed: searches move to it there, not after their
        texts are gone. on_links as for load."""
        directory = Path(directory)
        generation = f"notes-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        index = cls(directory, embedder.name, embedder.dimension, generation)
        index._keywords = KeywordIndex()  # filled as rows are added: a new index has its postings at once
        index.writable, index.embedder, index.on_links = writable, embedder, on_links
        if not writable:
            return index.fill_in_memory(embedded, total, progress, started, stop)
        index.notes_dir.mkdir(parents=True)
        first = not has_whole_index(directory, embedder.name, embedder.dimension)
        if first:  # named at once: a stop leaves the notes done so far for the next start to go on from
            index.complete = False
            index.write_manifest()
        if started:  # searches may read the index as it grows: each note is added whole, under the lock
            started(index)
        try:
            if progress and total:
                progress(0, total)
            for done, (path, chunks, vectors, note_meta) in enumerate(embedded, 1):
                if stop is not None and stop.is_set():
                    raise BuildStopped(f"stopped after {done - 1} of {total} notes")
                index._check_vectors(chunks, vectors)
                if chunks or note_meta is not None:  # no fsync per file here: sync_folder makes them all durable at once
                    with open(index.notes_dir / note_file_name(path), "wb") as file:
                        file.write(encode_note(path, chunks, vectors, note_meta or {}))
                    with index.lock:
                        index._add_rows(path, chunks, vectors)
                        index._keep_meta(path, note_meta or {})
                if progress and done < total:  # the last is said once it is durable, below
                    progress(done, total)
            index.mark_complete()  # the switch
        except BaseException:
            if not first:  # a rebuild beside a whole index: that one stays, this goes
                shutil.rmtree(index.notes_dir, ignore_errors=True)
            raise  # a first build stays named, as far as it got: the next start goes on from there
        index.on_links = None  # as at the end of load
        if finished:
            finished(index)
        remove_other_generations(directory, generation)
        if progress:
            progress(total, total)
        return index

    def fill_in_memory(self, embedded, total: int, progress=None, started=None, stop=None) -> "ChunkIndex":
        """write_new for a server that may not write: the same index, with no file."""
        if started:
            started(self)
        for done, (path, chunks, vectors, note_meta) in enumerate(embedded, 1):
            if stop is not None and stop.is_set():
                raise BuildStopped(f"stopped after {done - 1} of {total} notes")
            self._check_vectors(chunks, vectors)
            if chunks or note_meta is not None:
                with self.lock:
                    self._add_rows(path, chunks, vectors)
                    self._keep_meta(path, note_meta or {})
            if progress:
                progress(done, total)
        self.on_links = None  # as at the end of load
        return self

    # region resumable
    def write_manifest(self) -> None:
        manifest = {"format": FORMAT, "embedder": self.embedder_name, "dimension": self.dimension,
                    "generation": self.generation}
        write_json_atomically(self.directory / MANIFEST, manifest | ({} if self.complete else {"complete": False}))

    def mark_complete(self) -> None:
        """Say in the manifest that this generation is whole, once every note file in it is
        durable: until then a start loads it as far as it got and reconcile adds the rest."""
        with self.lock:
            sync_folder(self.notes_dir)
            self.complete = True
            self.write_manifest()
    # endregion resumable

    def update_note(self, path: str, chunks: list[Chunk], vectors, meta: dict | None = None) -> None:
        """Replace all the index holds of one note with these chunks and their vectors
        (embedder.embed_documents of their texts), and its meta. Writes that note's file,
        no other; the file holds chunks and meta together, so a crash keeps both or neither."""
        if not chunks and not meta:
            return self.remove_note(path)
        if any(chunk.path != path for chunk in chunks):
            raise ValueError(f"every chunk given for {path!r} must have that path")
        vectors = self._stored_vectors(chunks, vectors)
        with self.lock:  # the file first: if writing fails, memory still matches the disk
            old_texts = self.texts_of(self.rows_by_note.get(path, []))  # before the file that holds them goes
            if self.writable:
                write_note_file(self.notes_dir / note_file_name(path), encode_note(path, chunks, vectors, meta))
                self.writes += 1
            self._remove_rows(path, old_texts)
            self._add_rows(path, chunks, vectors)
            self._keep_meta(path, meta or {})

    # region set-meta
    def set_meta(self, path: str, meta: dict) -> None:
        """Store new meta with a note the index holds, keeping its chunks and vectors."""
        with self.lock:
            if path not in self.meta_by_note:
                raise KeyError(f"the index holds no note {path!r}")
            rows = self.rows_by_note.get(path, [])
            chunks, vectors = self.chunks_of(path), [self.vectors[row] for row in rows]
            if self.writable:
                write_note_file(self.notes_dir / note_file_name(path), encode_note(path, chunks, vectors, meta))
                self.writes += 1
            self._keep_meta(path, meta)
    # endregion set-meta

    def remove_note(self, path: str) -> None:
        with self.lock:
            file = self.notes_dir / note_file_name(path)
            old_texts = self.texts_of(self.rows_by_note.get(path, []))  # before the file that holds them goes
            if self.writable and file.exists():
                file.unlink()
                fsync_directory(self.notes_dir)
                self.writes += 1
            self._remove_rows(path, old_texts)
            self.meta_by_note.pop(path, None)

    # region links-held-once
    def _keep_meta(self, path: str, meta: dict) -> None:
        """Keep a note's meta in memory, but not the links reconcile.py stores in it: the link
        graph holds those, and a vault's links held twice take tens of megabytes. A load or a
        build hands them to its on_links as it reads them, for the graph to be made of; a
        build's come with their context lines, which the graph need not hold either."""
        if LINKS in meta:
            if self.on_links is not None:
                links = meta[LINKS]
                if self.writable and isinstance(links, dict):  # the file keeps the context lines: links.py reads them there
                    links = {key: value for key, value in links.items() if key != CONTEXTS}
                self.on_links(path, links)
            meta = {key: value for key, value in meta.items() if key != LINKS}
        self.meta_by_note[path] = meta
    # endregion links-held-once

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
            # Its terms first: memory may not keep the text (kept).
            if self._keywords is not None:
                self._keywords.add(row, chunk_terms(chunk))
            self.chunks[row], self.vectors[row], self.sketches[row] = self.kept(chunk), vector, sketch(vector.codes)
            self.rows_by_folder.setdefault(folder_key(chunk.folder), array("I")).append(row)
            for tag in chunk.tags:
                self.rows_by_tag.setdefault(tag_key(tag), array("I")).append(row)
            rows.append(row)
        if rows:  # a note stored without chunks has no rows, and is not among note_paths
            self.rows_by_note[path] = rows

    def _remove_rows(self, path: str, texts: dict[int, str]) -> None:
        """Free the note's rows; `texts` are their texts (texts_of), whose terms leave the postings."""
        for row in self.rows_by_note.pop(path, []):
            chunk = self.chunks[row]
            self._forget(self.rows_by_folder, folder_key(chunk.folder), row)
            for tag in chunk.tags:
                self._forget(self.rows_by_tag, tag_key(tag), row)
            if self._keywords is not None:
                self._keywords.remove(row, chunk_terms(chunk, texts[row]))
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

    # region texts-on-disk
    def kept(self, chunk: Chunk) -> Chunk:
        """What memory holds of a chunk just stored: all but its text, which the note's file
        holds, in an index that writes its files; all of it in one that may not."""
        return dataclasses.replace(chunk, text=None) if self.writable and chunk.text is not None else chunk

    def texts_to_show(self, rows: list[int]) -> dict[int, str]:
        """texts_of, for a search's snippets: a search under way on an index a rebuild has
        just replaced may find its files removed, and shows its hits without snippets."""
        try:
            return self.texts_of(rows)
        except IndexCorrupt as error:
            log.warning("index: hits shown without snippets: %s", error)
            return dict.fromkeys(rows, "")

    def texts_of(self, rows) -> dict[int, str]:
        """{row: its chunk's text} for these rows: from memory, or read from their notes'
        files, one read per note. A search reads the texts of the hits it shows."""
        with self.lock:
            return dict(self.texts_in_order(sorted(rows)))

    def texts_in_order(self, rows):
        """(row, text) for each live row of `rows`, in their order: a note's file is read
        once for its run of rows (a load puts a note's rows side by side)."""
        path, texts = None, {}
        for row in rows:
            chunk = self.chunks[row]
            if chunk is None:
                continue
            if chunk.text is not None:
                yield row, chunk.text
                continue
            if chunk.path != path:
                path, texts = chunk.path, dict(zip(self.rows_by_note[chunk.path], self.stored_texts(chunk.path)))
            yield row, texts[row]

    def stored_texts(self, path: str) -> list[str]:
        """The texts of a note's chunks as its file holds them, in order."""
        texts = self.stored_rest(path)["texts"]
        if len(texts) != len(self.rows_by_note[path]):
            raise IndexCorrupt(f"the index file of {path!r} is damaged (it holds other chunks than the index in "
                               "memory); rebuild the index")
        return texts

    def stored_rest(self, path: str) -> dict:
        """The second line of a note's file (encode_note): its texts and its links' contexts.
        Takes no lock, so that the link graph may ask while it holds its own (links.py)."""
        file = self.notes_dir / note_file_name(path)
        try:
            with open(file, "rb", buffering=0) as handle:
                _, _, rest = handle.read().partition(b"\n")
            return decode_rest(rest, path)
        except (OSError, RecursionError, ValueError, KeyError, TypeError) as error:
            raise IndexCorrupt(f"index file {file} is damaged ({error}); rebuild the index") from None
    # endregion texts-on-disk

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
                for row, text in self.texts_in_order(range(len(self.chunks))):
                    keywords.add(row, chunk_terms(self.chunks[row], text))
                self._keywords = keywords
            return self._keywords

    # region use-stored-keywords
    def use_stored_keywords(self, copy, stamps: dict[str, list[int]]) -> None:
        """Take the stored postings (stored_keywords.read_copy) if they fit the notes just
        loaded, and tokenize only the notes added since; if they do not fit, keywords()
        builds the postings from the chunks."""
        keywords = stored_keywords.fit(copy, self.rows_by_note, stamps)
        if keywords is None:
            return
        stored_rows = len(keywords.lengths)
        for row, text in self.texts_in_order(range(stored_rows, len(self.chunks))):  # the notes added since, if any
            keywords.add(row, chunk_terms(self.chunks[row], text))
        self._keywords = keywords
        self.keywords_stored = 0 if stored_rows == len(self.chunks) else None  # else store them with those
    # endregion use-stored-keywords

    def note_file_stamp(self, path: str) -> list[int]:
        info = os.stat(self.notes_dir / note_file_name(path))
        return stored_keywords.file_stamp(info.st_ino, info)

    def has_keywords(self) -> bool:
        return self._keywords is not None

    # region save-keywords
    def save_keywords(self) -> bool:
        """Store the postings for the next load (write_atomically); False if they are
        stored as they are."""
        with self.saving:  # one save at a time: they would share the .tmp
            if not self.writable or self._keywords is None or self.keywords_stored == self.writes:  # writes only grow
                return False
            self.keywords_stored = write_atomically(self.notes_dir / stored_keywords.FILE, self._write_keywords)
        return True

    def _write_keywords(self, file) -> int:
        """Write the postings into `file` while the lock is held: copying them first, to write
        with the lock let go, would take as much memory again. Returns the writes they hold."""
        with self.lock:
            notes = list(self.rows_by_note.items())
            stamps = [self.note_file_stamp(path) for path, _ in notes]
            stored_keywords.write_copy(file, self._keywords, notes, stamps)
            return self.writes
    # endregion save-keywords


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
