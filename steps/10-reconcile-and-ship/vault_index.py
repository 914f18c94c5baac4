"""The vault's indexes: the link graph, and the search index (notes cut into
chunks, embedded, stored, and searched).

This module joins what the steps before built: vault.py reads a note, notes.py
cuts it into chunks that each carry the note's title and heading path, an
embedder turns the chunks into vectors, and index.py keeps them on disk and in
memory; search.py ranks them. VaultIndex holds the one index the server uses.

Building the index of a large vault with Ollama takes minutes, so the server
does not wait for it: the index, and the link graph stored with it, are loaded and
brought up to date with the vault (reconcile.py), or built, in a thread of its own.
Answers given meanwhile come from what is there and say what is missing: during
reconcile, how many notes it has yet to check; during a first build, how many notes
are indexed so far.
"""
import logging
import threading
import weakref
from pathlib import Path

from index import CONTEXTS, BuildStopped, Chunk, ChunkIndex, IndexCorrupt, IndexUnusable, ProgressLine, writer_lock
from links import LinkGraph, NoteLinks, entry_of, entry_to_store, stored_entries_into
from notes import parse_note
from parallel_build import embedded_notes
from reconcile import reconcile, refresh_note, stamp_of, stamp_to_store
from resources import title_of
from search import Hit, search
from vault import Vault, VaultError, path_parts

log = logging.getLogger("index")
# Seconds an answer waits for a first build: a small vault is done by then; a large one
# answers from the notes indexed so far, and says so, rather than keep the client waiting.
WAIT_FOR_FIRST_BUILD = 0.5
SAVE_KEYWORDS_AFTER = 30.0  # seconds without a change before the watcher's changes are stored

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


class EitherSet:
    """Set when either event is: a rebuild stops for its request's cancel or the server's stop."""

    def __init__(self, *events):
        self.events = [event for event in events if event is not None]

    def is_set(self) -> bool:
        return any(event.is_set() for event in self.events)


class Switch:
    """A VaultIndex's move to another embedder and the folder of its index, for a `with`
    block run while the build lock is held; undone if the block fails, so that the
    index in use stays with the embedder that made it."""

    def __init__(self, vault_index, embedder, directory):
        self.vault_index, self.embedder, self.directory = vault_index, embedder, Path(directory)
        self.before = None

    def __enter__(self):
        index = self.vault_index
        self.before = (index.embedder, index.directory, index.writer, index.writable)
        index.embedder, index.directory, index.writer = self.embedder, self.directory, None
        index.take_writer_lock()

    def __exit__(self, failed, *_):
        index = self.vault_index
        dropped = self.before[2] if failed is None else index.writer  # the lock of the folder left
        if dropped is not None:
            dropped.close()
        if failed is not None:
            index.embedder, index.directory, index.writer, index.writable = self.before


def weakly(method):
    """`method`, called through a weak reference to its object; None once that is gone. The
    link graph calls back the VaultIndex that holds it: a strong reference would make a
    cycle, which keeps a VaultIndex dropped (and the lock on its index folder) alive until
    the cycle collector runs, and gc.freeze may put it where no collection looks."""
    reference = weakref.WeakMethod(method)

    def call(*args):
        bound = reference()
        return None if bound is None else bound(*args)
    return call


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
        self.stale = 0  # notes reconcile has yet to check (staleness)
        self.reconciling = False  # reconcile holds build_lock: a reindex now says so, not 'being rebuilt'
        self.building: ChunkIndex | None = None  # the first build's index while it grows, searched meanwhile
        self.build_lock = threading.RLock()  # one build at a time; a switch holds it around one
        self.save_lock, self.save_timer = threading.Lock(), None  # see save_keywords_later
        self.writable, self.writer = True, None  # see take_writer_lock
        self.stopping, self.thread = threading.Event(), None  # see stop
        self.find_better = None  # see look_for_better
        self.before_reading, self.before_reading_lock = None, threading.Lock()  # see start

    # region before-reading
    def start(self, rebuild: bool = False, before_reading=None) -> threading.Thread:
        """Load the index, or build it if there is none, in a thread of its own. before_reading(),
        if given, is called once, when the index is about to list or read its first note
        (reading_notes): after a load of the stored index, which reads none."""
        self.before_reading = before_reading
        self.thread = threading.Thread(target=self.open, args=(rebuild,), name="index", daemon=True)
        self.thread.start()
        return self.thread

    def reading_notes(self) -> None:
        """Run before_reading (see start) the first time the index is about to read notes."""
        with self.before_reading_lock:
            before_reading, self.before_reading = self.before_reading, None
            if before_reading is not None:
                before_reading()
    # endregion before-reading

    # region ollama-found-late
    def look_for_better(self, find, every: float = 60.0) -> None:
        """Started with the static table because Ollama did not answer: look again every
        `every` seconds until find() gives Ollama's embedder and the folder of its index,
        then switch to it, in a thread of its own; a reindex looks too (reindex)."""
        self.find_better = find

        def look():
            while not self.stopping.wait(every):
                if self.switch_if_found(find):
                    return
        threading.Thread(target=look, name="look-for-ollama", daemon=True).start()

    def switch_if_found(self, find) -> bool:
        """Switch to the embedder find() gives, if any: its stored index is loaded and
        reconciled, or built, while searches go on from the index in use (each index
        embeds queries with its own embedder). True once switched."""
        found = find()
        if found is None:
            return False
        log.info("embeddings: Ollama answers now; switching to its index in %s", found[1])
        try:
            with self.build_lock, Switch(self, *found):
                if not self.catch_up():  # no index of it yet, or none usable: built now
                    self.rebuild()  # the index in use answers until this one is whole
        except (NotReady, BuildStopped):  # a reindex under way, or the server stopping: later
            return False
        except Exception:  # Ollama gone again, say: the index in use stays in use
            log.exception("embeddings: could not switch to Ollama's index")
            return False
        return True
    # endregion ollama-found-late

    def reindex(self, progress=None, stop=None) -> ChunkIndex:
        """rebuild, for the reindex tool: with Ollama's embedder if it answers now."""
        found = self.find_better() if self.find_better else None
        if found is None or not self.build_lock.acquire(blocking=False):  # rebuild says why it cannot
            return self.rebuild(progress, stop)
        try:
            log.info("embeddings: Ollama answers now; the reindex builds its index in %s", found[1])
            with Switch(self, *found):
                return self.rebuild(progress, stop)
        finally:
            self.build_lock.release()

    # region stop
    def stop(self, seconds: float = 3.0) -> None:
        """The server is stopping: a build under way ends at its next note, the notes done
        kept for the next start to go on from (a first build) or thrown away (a rebuild
        beside a whole index). Waits `seconds` at most, so that no client waits long."""
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(seconds)
        if self.writer is not None:  # the next server to start writes the index
            self.writer.close()
            self.writer = None
    # endregion stop

    # region open
    def open(self, rebuild: bool = False) -> None:
        self.take_writer_lock()
        try:
            if rebuild or not self.catch_up():
                self.rebuild()
        except NotReady:  # a reindex asked for at startup is building it: wait for that build
            with self.build_lock:
                pass
        except BuildStopped:  # the server is stopping
            log.info("index: the build stopped with the server; the next start goes on from the notes done")
            return
        except Exception:  # Ollama gone mid-build, a full disk: searches will say so
            log.exception("index: could not be built")
        finally:
            self.reading_notes()  # if nothing has yet: the watcher starts whatever happened
            if self.links is None and not self.stopping.is_set():  # no index gave it (Ollama unreachable, say)
                self.read_links()
            self.links_ready.set()
            self.ready.set()
        index = self.chunk_index
        if index is not None:  # postings not stored take seconds on a large vault: now, not in a search
            index.keywords()
            self.save_keywords()

    # region catch-up
    def catch_up(self) -> bool:
        """Load the stored index and link graph, answer from them at once, and bring them
        up to date with the vault behind those answers (reconcile.py); False, with nothing
        changed, if the index cannot be used as it is."""
        with self.build_lock:  # the watcher's changes wait for the end of reconcile; a reindex is refused
            self.reconciling = True
            try:
                report = reconcile(self)
            except IndexUnusable as why:
                log.info("index: %s; building it", why)
                return False
            finally:
                self.reconciling = False
            if self.writable and not self.chunk_index.complete:  # a first build a stop cut short: now whole
                self.chunk_index.mark_complete()
                log.info("index: the first build, cut short by a stop, is whole now")
        log.info("index: %s", report)  # the one line that says what changed while the server was off
        return True
    # endregion catch-up
    # endregion open

    # region writer-lock
    def take_writer_lock(self) -> None:
        """Two clients on one vault (Claude Desktop and Claude Code, say) start two servers
        that share this folder. One of them writes it; the other loads it, keeps its own
        changes in memory, and never writes or deletes a file the first may be using."""
        if self.writer is not None and Path(self.writer.name).parent == self.directory:
            return  # held already: a second lock of this process would be refused by the first
        self.directory.mkdir(parents=True, exist_ok=True)
        self.writer = writer_lock(self.directory)
        self.writable = self.writer is not None
        if not self.writable:
            log.info("index: another server writes the index in %s; this one reads it and keeps its own "
                     "changes in memory", self.directory)
    # endregion writer-lock

    # region load-stored
    def load_stored(self) -> tuple[ChunkIndex, LinkGraph]:
        """The stored index, and the link graph stored with it, which answers use from now on.
        Until reconcile has checked every note, they say how many it has yet to check."""
        entries: dict[str, dict] = {}  # the link graph's, read with the notes' files
        index = ChunkIndex.load(self.directory, self.embedder.name, self.dimension(), self.writable,
                                on_links=stored_entries_into(entries))
        index.embedder = self.embedder
        if not index.complete:
            log.info("index: going on with a first build a stop cut short: %d notes were done", len(index.note_meta()))
        log.info("index: keyword postings %s", "loaded with it" if index.has_keywords() else "to build from the chunks")
        for path in [path for path in index.note_meta() if self.never_listed(path)]:
            index.remove_note(path)  # gone before the first answer, chunks or none (an excluded file)
            entries.pop(path, None)
        metas = index.note_meta()
        self.stale = len(metas)  # until reconcile has listed the vault and counts down
        self.chunk_index = index
        self.ready.set()  # a search needs no links: it answers while they are put together
        self.links = LinkGraph.from_stored(self.vault, entries, weakly(self.stored_contexts))
        log.info("links: %d notes loaded with the index", len(self.links))
        self.links_ready.set()
        return index, self.links
    # endregion load-stored

    # region never-listed
    def never_listed(self, stored_path: str) -> bool:
        """True for a stored note the vault would not list: no vault path at all ('../x.md',
        '.trash/x.md': an index edited by hand), or in a folder denied since it was stored,
        by its name or by where its symbolic links lead (a resolve each, so only if any is)."""
        try:
            path_parts(stored_path)
            if not self.vault.denied_folders:
                return False
            real = (self.vault.root / stored_path).resolve()
        except (VaultError, OSError, RuntimeError):  # RuntimeError: a symlink loop, in Python 3.11
            return True
        inside = real.is_relative_to(self.vault.root)  # a link out of the vault is reconcile's to judge
        return self.vault.denied(stored_path) or (inside and self.vault.denied_real(real))
    # endregion never-listed

    def stored_contexts(self, path: str) -> list[str] | None:
        """The context lines of a note's links, from its file of the index in use (the link
        graph reads them only when an answer shows them); None if there is none to read."""
        index = self.chunk_index
        try:
            return index.stored_rest(path)[CONTEXTS] if index is not None else None
        except IndexCorrupt:  # gone with its note, or with a generation a rebuild replaced
            return None

    def read_links(self) -> None:
        try:
            self.links = LinkGraph.build(self.vault)
            log.info("links: %d notes read", len(self.links))
        except Exception:
            log.exception("links: the link graph could not be built")

    # region staleness
    def staleness(self) -> dict:
        """{"stale": notes reconcile has yet to check} while it runs, else {}: taken before an
        answer, so that the answer is no staler than it says."""
        stale = self.stale
        return {"stale": stale} if stale else {}
    # endregion staleness

    def dimension(self) -> int:
        # Ollama says how long its vectors are only when it first embeds something.
        if self.embedder.dimension is None:
            self.embedder.embed_query("dimension")
        return self.embedder.dimension

    # region rebuild
    def rebuild(self, progress=None, stop=None) -> ChunkIndex:
        """Embed every note anew and swap the new index in when it is complete;
        searches meanwhile use the old one. progress(done, total) hears of each note;
        `stop`, an Event, ends the build when it is set (BuildStopped), the old index kept."""
        if not self.build_lock.acquire(blocking=False):
            if self.reconciling:
                raise NotReady(f"The index is being brought up to date with the vault after the start ({self.stale} "
                               "notes left to check); ask for a reindex again once it is done")
            raise NotReady(f"The index is already being rebuilt ({self.done} of {self.total} notes done)")
        try:
            self.dimension()
            self.reading_notes()
            paths = self.vault.all_notes()  # Obsidian's excluded files too, for their links
            shown = ProgressLine() if log.isEnabledFor(logging.INFO) else None  # none below --log-level info

            def report(done: int, total: int) -> None:
                self.done, self.total = done, total
                if shown:
                    shown(done, total)
                if progress:
                    progress(done, total)

            def started(index: ChunkIndex) -> None:
                self.building = index  # searched while no other index is there (search_with_progress)

            def finished(index: ChunkIndex) -> None:
                self.chunk_index = index  # searched from now on, before the old generation is removed

            # Read, cut and embedded by worker processes on a large vault (parallel_build.py).
            embedded = embedded_notes(paths, self.stored_parts, self.embedder)
            entries: dict[str, dict] = {}  # a first build's links come with the notes
            take_links = stored_entries_into(entries) if self.links is None else None
            self.chunk_index = ChunkIndex.write_new(self.directory, self.embedder, embedded, len(paths), report,
                                                    started, EitherSet(stop, self.stopping), self.writable, finished,
                                                    take_links)
            if self.links is None:
                self.links = LinkGraph.from_stored(self.vault, entries, weakly(self.stored_contexts))
                self.links_ready.set()
            self.save_keywords()
            return self.chunk_index
        finally:
            self.building = None
            self.build_lock.release()
    # endregion rebuild

    def save_keywords(self) -> None:
        """Store the search index's keyword postings, so that the next start loads them
        (stored_keywords.py). A copy that cannot be written costs the next start time only."""
        index = self.chunk_index
        try:
            if index is not None and index.save_keywords():
                log.info("index: keyword postings stored")
        except (OSError, ValueError) as error:  # a full disk; postings an error left out of step
            log.warning("index: the keyword postings could not be stored: %s", error)

    # region save-keywords-later
    def save_keywords_between_builds(self) -> None:
        """save_keywords, for the timer: not while a build runs, whose end removes the folder
        the index it replaces lives in, and so the copy being written there."""
        with self.build_lock:
            self.save_keywords()

    def save_keywords_later(self) -> None:
        """Save SAVE_KEYWORDS_AFTER seconds after the last of a run of changes, not after each:
        a copy of a large vault's postings takes a second to write."""
        with self.save_lock:
            if self.save_timer is not None:
                self.save_timer.cancel()
            self.save_timer = threading.Timer(SAVE_KEYWORDS_AFTER, self.save_keywords_between_builds)
            self.save_timer.daemon = True  # one not yet saved at exit: the next start builds them
            self.save_timer.start()
    # endregion save-keywords-later

    # region stored-parts
    def stored_parts(self, path: str) -> tuple[list[Chunk], dict | None]:
        """A note's chunks and the meta stored with them: its stamp, taken before the read,
        which lets the next start's reconcile trust them without reading the note, and its
        links. No meta for a note gone before it could be read: it is not stored."""
        stamp = stamp_of(self.vault, path)
        if stamp is None:
            return [], None
        chunks, links = self.read_parts(path)
        return chunks, stamp_to_store(stamp) | {"links": entry_to_store(links)}
    # endregion stored-parts

    def read_parts(self, path: str) -> tuple[list[Chunk], NoteLinks]:
        """The chunks of one note, as the index stores them, and its entry in the link graph,
        from one read of it; no chunks and no links if it cannot be read."""
        try:
            _, text = self.vault.read_note(path)
        except VaultError as error:  # deleted a moment ago, grown too large: skip it, say why
            log.info("index: skipping %s: %s", path, error)
            return [], NoteLinks([], [], [])
        note = parse_note(title_of(path), text)
        if self.vault.excluded(path):  # Obsidian's excluded files: linked, never searched
            return [], entry_of(note, text)
        folder = path.rpartition("/")[0]
        tags, aliases = within([tag.name for tag in note.tags]), within(note.aliases)
        chunks = [
            Chunk(id=f"{path}#{number}", path=path, heading_path=[note.title, *within_each(piece.path)],
                  text=piece.text, title=note.title, aliases=aliases, tags=tags, folder=folder)
            for number, piece in enumerate(note.chunks())
        ]
        return chunks, entry_of(note, text)

    def update_note(self, path: str) -> None:
        """A note is new or changed: read it again into the link graph and the search index.
        Called by the watcher's one worker, so two updates of one note never race."""
        self.ready.wait()  # a change seen while the first index is built waits for it
        with self.build_lock:  # a rebuild under way finishes first; then this lands in its index
            if self.chunk_index is None:  # none could be built: the link graph at least stays current
                if self.links is not None:
                    self.links.update_note(path)
                return
            # Embeds only if the chunks changed (a touch, a save without edit costs a read), and
            # stores the note's stamp and links, so the next start's reconcile need not read it.
            outcome = refresh_note(self, path)
            log.debug("index: %s %s", path, outcome)
        self.save_keywords_later()

    def remove_note(self, path: str) -> None:
        """A note is gone (deleted, or renamed away): forget it in both."""
        self.ready.wait()
        if self.links is not None:
            self.links.remove_note(path)
        with self.build_lock:
            if self.chunk_index is not None:
                self.chunk_index.remove_note(path)
        self.save_keywords_later()

    def current(self) -> ChunkIndex | None:
        """The search index, waiting briefly for the first build; None if there is none yet."""
        self.ready.wait(WAIT_FOR_FIRST_BUILD)
        return self.chunk_index

    def link_graph(self) -> LinkGraph:
        self.links_ready.wait(WAIT_FOR_FIRST_BUILD)
        if self.links is None:
            if self.links_ready.is_set():
                raise NotReady("The link graph could not be built; the server log says why; try again in a moment")
            done, total = self.done, self.total  # a first build brings the links with its notes
            so_far = f" with the first build, {done} of {total} notes read so far" if total else ""
            raise NotReady(f"The link graph is being built{so_far}; try again in a moment")
        return self.links

    def search(self, query: str, limit: int, folder=None, tag=None, mode="hybrid") -> list[Hit]:
        return self.search_with_progress(query, limit, folder, tag, mode)[0]

    def search_with_progress(self, query: str, limit: int, folder=None, tag=None, mode="hybrid"):
        """The hits, and what the answer lacks: {} when the index is whole; during a first
        build, {"indexed": notes done, "total": notes}, the hits coming from those done;
        during reconcile, {"stale": notes not yet checked}."""
        self.ready.wait(WAIT_FOR_FIRST_BUILD)  # a small vault is built before the client notices
        # building before index: a build sets index, then clears building, so one of the two is seen.
        building, progress = self.building, {"indexed": self.done, "total": self.total}
        stale = self.staleness()  # before the index is read, as the counts above
        index = self.chunk_index  # one read: a rebuild may swap it meanwhile
        if index is not None:
            return search(index, index.embedder or self.embedder, query, limit, folder, tag, mode), stale
        if building is not None:  # counted before the search: the answer holds at least that many notes
            return search(building, building.embedder or self.embedder, query, limit, folder, tag, mode), progress
        if self.ready.is_set():
            raise NotReady("The search index could not be built; the server log says why. Try reindex.")
        raise NotReady("The search index is still being built (starting); try again in a moment")
