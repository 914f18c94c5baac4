"""The vault's indexes: the link graph, and the search index (notes cut into
chunks, embedded, stored, and searched).

This module joins what the steps before built: vault.py reads a note, notes.py
cuts it into chunks that each carry the note's title and heading path, an
embedder turns the chunks into vectors, and index.py keeps them on disk and in
memory; search.py ranks them. VaultIndex holds the one index the server uses.

Building the index of a large vault with Ollama takes minutes, so the server
does not wait for it: the index is loaded or built in a thread of its own, and a
search made during a first build answers from the notes indexed so far, and
says how far the build has got.
"""
import logging
import threading
from pathlib import Path

from index import Chunk, ChunkIndex, IndexUnusable, ProgressLine
from links import LinkGraph
from notes import parse_note
from parallel_build import embedded_notes
from resources import title_of
from search import Hit, search
from vault import Vault, VaultError

log = logging.getLogger("index")
# Seconds an answer waits for a first build: a small vault is done by then; a large one
# answers from the notes indexed so far, and says so, rather than keep the client waiting.
WAIT_FOR_FIRST_BUILD = 0.5

# What every chunk of a note repeats of it, its tags, its aliases and each heading above
# it, is kept to this many characters: a 1 MB note of tags has 500 chunks, and each would
# store and tokenize all of them, 500 MB. A real note's context is a small part of this.
CONTEXT_CHARS = 2000


def within(names: list[str], limit: int = CONTEXT_CHARS) -> list[str]:
    """Those of the names that fit in `limit` characters together, in their order."""
    kept, used = [], 0
    for name in names:
        if used + len(name) <= limit:
            kept.append(name)
            used += len(name)
    return kept


def within_each(headings: list[str], limit: int = CONTEXT_CHARS) -> list[str]:
    """Each heading cut to `limit` characters."""
    return [heading[:limit] for heading in headings]


class NotReady(Exception):
    """The index is still being built; the message says how far it has got."""


class VaultIndex:
    def __init__(self, vault: Vault, embedder, directory: Path):
        self.vault, self.embedder, self.directory = vault, embedder, Path(directory)
        self.chunk_index: ChunkIndex | None = None
        self.links: LinkGraph | None = None
        self.links_ready = threading.Event()  # set once the link graph is built
        self.ready = threading.Event()  # set once the first index is loaded or built
        self.done, self.total = 0, 0  # notes embedded so far by the build under way
        self.building: ChunkIndex | None = None  # the first build's index while it grows, searched meanwhile
        self.build_lock = threading.Lock()  # one build at a time

    # region open
    def start(self, rebuild: bool = False) -> threading.Thread:
        """Load the index, or build it if there is none, in a thread of its own."""
        thread = threading.Thread(target=self.open, args=(rebuild,), name="index", daemon=True)
        thread.start()
        return thread

    def open(self, rebuild: bool = False) -> None:
        try:  # the link graph first: it needs no embeddings, so it is ready in moments
            self.links = LinkGraph.build(self.vault)
            log.info("links: %d notes read", len(self.links.note_paths()))
        except Exception:
            log.exception("links: the link graph could not be built")
        finally:
            self.links_ready.set()
        try:
            self.chunk_index = None if rebuild else self.load()
            if self.chunk_index is None:
                self.rebuild()
        except NotReady:  # a reindex asked for at startup is building it: wait for that build
            with self.build_lock:
                pass
        except Exception:  # Ollama gone mid-build, a full disk: searches will say so
            log.exception("index: could not be built")
        finally:
            self.ready.set()
        index = self.chunk_index
        if index is not None:  # the keyword postings take seconds on a large vault: now, not in a search
            index.keywords()
    # endregion open

    def load(self) -> ChunkIndex | None:
        """The index on disk, if it can be used as it is."""
        try:
            index = ChunkIndex.load(self.directory, self.embedder.name, self.dimension())
        except IndexUnusable as why:
            log.info("index: %s; building it", why)
            return None
        log.info("index: %d chunks of %d notes, loaded from %s", len(index), len(index.note_paths()), self.directory)
        return index

    def dimension(self) -> int:
        # Ollama says how long its vectors are only when it first embeds something.
        if self.embedder.dimension is None:
            self.embedder.embed_query("dimension")
        return self.embedder.dimension

    # region rebuild
    def rebuild(self, progress=None) -> ChunkIndex:
        """Embed every note anew and swap the new index in when it is complete;
        searches meanwhile use the old one. progress(done, total) hears of each note."""
        if not self.build_lock.acquire(blocking=False):
            raise NotReady(f"The index is already being rebuilt ({self.done} of {self.total} notes done)")
        try:
            self.dimension()
            paths = self.vault.list_notes()
            shown = ProgressLine() if log.isEnabledFor(logging.INFO) else None  # none below --log-level info

            def report(done: int, total: int) -> None:
                self.done, self.total = done, total
                if shown:
                    shown(done, total)
                if progress:
                    progress(done, total)

            def started(index: ChunkIndex) -> None:
                self.building = index  # searched while no other index is there (search_with_progress)

            # Read, cut and embedded by worker processes on a large vault (parallel_build.py).
            embedded = embedded_notes(paths, self.note_chunks, self.embedder)
            self.chunk_index = ChunkIndex.write_new(self.directory, self.embedder, embedded, len(paths), report,
                                                    started)
            return self.chunk_index
        finally:
            self.building = None
            self.build_lock.release()
    # endregion rebuild

    def note_chunks(self, path: str) -> list[Chunk]:
        """The chunks of one note, as the index stores them; none if it cannot be read."""
        try:
            _, text = self.vault.read_note(path)
        except VaultError as error:  # deleted a moment ago, grown too large: skip it, say why
            log.info("index: skipping %s: %s", path, error)
            return []
        note = parse_note(title_of(path), text)
        folder = path.rpartition("/")[0]
        tags, aliases = within([tag.name for tag in note.tags]), within(note.aliases)
        return [
            Chunk(id=f"{path}#{number}", path=path, heading_path=[note.title, *within_each(piece.path)],
                  text=piece.text, title=note.title, aliases=aliases, tags=tags, folder=folder)
            for number, piece in enumerate(note.chunks())
        ]

    # region one-note
    def update_note(self, path: str) -> None:
        """A note is new or changed: read it again into the link graph and the search index.
        Called by the watcher's one worker, so two updates of one note never race."""
        self.ready.wait()  # a change seen while the first index is built waits for it
        if self.links is not None:
            self.links.update_note(path)
        with self.build_lock:  # a rebuild under way finishes first; then this lands in its index
            if self.chunk_index is None:
                return
            chunks = self.note_chunks(path)  # none if it vanished: the index forgets it
            vectors = self.embedder.embed_documents([chunk.text for chunk in chunks]) if chunks else []
            self.chunk_index.update_note(path, chunks, vectors)

    def remove_note(self, path: str) -> None:
        """A note is gone (deleted, or renamed away): forget it in both."""
        self.ready.wait()
        if self.links is not None:
            self.links.remove_note(path)
        with self.build_lock:
            if self.chunk_index is not None:
                self.chunk_index.remove_note(path)
    # endregion one-note

    def current(self) -> ChunkIndex | None:
        """The search index, waiting briefly for the first build; None if there is none yet."""
        self.ready.wait(WAIT_FOR_FIRST_BUILD)
        return self.chunk_index

    def link_graph(self) -> LinkGraph:
        self.links_ready.wait(WAIT_FOR_FIRST_BUILD)
        if self.links is None:
            reason = "could not be built; the server log says why" if self.links_ready.is_set() else "is being built"
            raise NotReady(f"The link graph {reason}; try again in a moment")
        return self.links

    def search(self, query: str, limit: int, folder=None, tag=None, mode="hybrid") -> list[Hit]:
        return self.search_with_progress(query, limit, folder, tag, mode)[0]

    def search_with_progress(self, query: str, limit: int, folder=None, tag=None, mode="hybrid"):
        """The hits, and what the answer lacks: {} when the index is whole; during a first
        build, {"indexed": notes done, "total": notes}, the hits coming from those done."""
        self.ready.wait(WAIT_FOR_FIRST_BUILD)  # a small vault is built before the client notices
        # building before index: a build sets index, then clears building, so one of the two is seen.
        building, progress = self.building, {"indexed": self.done, "total": self.total}
        index = self.chunk_index  # one read: a rebuild may swap it meanwhile
        if index is not None:
            return search(index, self.embedder, query, limit, folder, tag, mode), {}
        if building is not None:  # counted before the search: the answer holds at least that many notes
            return search(building, self.embedder, query, limit, folder, tag, mode), progress
        if self.ready.is_set():
            raise NotReady("The search index could not be built; the server log says why. Try reindex.")
        raise NotReady("The search index is still being built (starting); try again in a moment")
