"""Keeping the index fresh while the server runs: a poller, a debounce, one job queue.

Every `poll_interval` seconds the poller takes a snapshot of the vault (each note's
size, modification time, inode and number of names) and compares it with the one
before: notes created, changed, deleted and renamed become jobs, index(path) or
remove(path). A job waits until its note has been quiet for `debounce` seconds, then
one worker thread runs it by calling the function it was given: on_index(path) or
on_remove(path). This module knows nothing of embeddings or of MCP; server.py
passes the functions that update the index and tell the clients.

Decisions:
- Polling, not the system's notifications (inotify, FSEvents, ReadDirectoryChanges):
  the standard library has none of them, and a poll is cheap. Vault.list_notes walks
  the folders again only when one of them changed, and a stat per note gives its
  size and time, a few milliseconds for thousands of notes.
- The debounce: Obsidian saves every couple of seconds while you type. Each poll
  that sees the note change again pushes its job back, so a note is embedded once
  you pause, not at every save.
- One worker, one queue, at most one job per note: a newer job for a note replaces
  the one waiting. Two updates of one note never run at once, so an older text can
  never be stored over a newer one.
- Renames: a note gone and a note new in the same poll, with the same size, time and
  inode, are one file moved (a rename changes none of them, and needs no read). It is
  logged as a rename, and indexed as a removal and a new note: a chunk holds its
  note's path and title, so moving chunks means rewriting every one, and embedding
  the note again is simpler and surely right.
- A job for a note that vanished while it ran (deleted between the poll and the
  read) is a removal. Any other error in a job is logged, and the worker goes on.
- Subscribers hear of changes: on_list_changed() once per poll in which notes came
  or went, from the poller's thread; on_note_changed(path) after each job, from the
  worker's, so a client told of a change finds it in the index.
- stop() ends the poller at once and lets the worker finish the job in hand. Jobs
  still waiting are dropped: at the next start, reconcile (step 10) finds them.
  Both threads are daemons, so a job that hangs cannot keep the process alive.
"""
import logging
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

log = logging.getLogger("watcher")

INDEX, REMOVE = "index", "remove"


# region stamp
@dataclass(frozen=True)
class Stamp:
    """What a stat says of a note. Any difference means the file was written or replaced,
    or gained or lost a name (a hard link), which decides whether it may be served (vault.py)."""

    size: int
    mtime_ns: int
    inode: int
    names: int
# endregion stamp


@dataclass
class Changes:
    created: list[str]
    changed: list[str]
    deleted: list[str]
    renamed: list[tuple[str, str]]  # (old path, new path)

    def list_changed(self) -> bool:
        return bool(self.created or self.deleted or self.renamed)


# region take-snapshot
def take_snapshot(vault) -> dict[str, Stamp]:
    """Every note of the vault with its stamp."""
    snapshot = {}
    for path in vault.list_notes():
        try:
            info = os.stat(vault.root / path)
        except OSError:
            continue  # deleted since the listing: not in this snapshot
        snapshot[path] = Stamp(info.st_size, info.st_mtime_ns, info.st_ino, info.st_nlink)
    return snapshot
# endregion take-snapshot


# region snapshots
def compare(before: dict[str, Stamp], after: dict[str, Stamp]) -> Changes:
    """What happened between two snapshots."""
    gone = {stamp: path for path, stamp in before.items() if path not in after}
    renamed = []
    for path, stamp in after.items():
        if path not in before and stamp in gone:
            renamed.append((gone.pop(stamp), path))
    moved_from, moved_to = {old for old, _ in renamed}, {new for _, new in renamed}
    return Changes(
        created=[path for path in after if path not in before and path not in moved_to],
        changed=[path for path in after if path in before and after[path] != before[path]],
        deleted=[path for path in before if path not in after and path not in moved_from],
        renamed=renamed,
    )
# endregion snapshots


@dataclass
class Job:
    kind: str  # INDEX or REMOVE
    path: str
    due: float  # time.monotonic() when the note will have been quiet long enough


class JobQueue:
    """Jobs waiting for their note to be quiet, at most one per note, handed out one at a time.

    Every job is due `debounce` seconds after it was put, so the jobs wait in the
    order they were put, and the first waiting is always the first due."""

    def __init__(self, debounce: float):
        self.debounce = debounce
        self._waiting: OrderedDict[str, Job] = OrderedDict()  # by path
        self._in_hand = 0  # jobs taken and not yet done
        self._closed = False
        self._changed = threading.Condition()

    # region queue
    def put(self, kind: str, path: str) -> None:
        """Queue a job, replacing one waiting for the same note: the note is not quiet yet."""
        with self._changed:
            self._waiting.pop(path, None)  # and the new job goes to the back: it is due last
            self._waiting[path] = Job(kind, path, time.monotonic() + self.debounce)
            self._changed.notify()

    def take(self) -> Job | None:
        """The next job once it is due; None once the queue is closed."""
        with self._changed:
            while not self._closed:
                if not self._waiting:
                    self._changed.wait()
                    continue
                job = next(iter(self._waiting.values()))
                wait = job.due - time.monotonic()
                if wait <= 0:
                    del self._waiting[job.path]
                    self._in_hand += 1
                    return job
                self._changed.wait(wait)
            return None
    # endregion queue

    def done(self) -> None:
        with self._changed:
            self._in_hand -= 1

    def close(self) -> None:
        """take() returns None from now on; the jobs waiting are dropped."""
        with self._changed:
            self._closed = True
            self._waiting.clear()
            self._changed.notify_all()

    def __len__(self) -> int:
        """Jobs waiting or in hand."""
        with self._changed:
            return len(self._waiting) + self._in_hand


class Watcher:
    """Watches one vault: start() it, stop() it. on_index(path) and on_remove(path) do
    the jobs; on_note_changed(path) and on_list_changed() hear of changes (see the
    module's docstring for which thread calls which)."""

    def __init__(self, vault, on_index, on_remove, on_note_changed=None, on_list_changed=None,
                 poll_interval: float = 1.0, debounce: float = 2.0):
        self.vault = vault
        self.on_index, self.on_remove = on_index, on_remove
        self.on_note_changed, self.on_list_changed = on_note_changed, on_list_changed
        self.poll_interval = poll_interval
        self.queue = JobQueue(debounce)
        self._snapshot: dict[str, Stamp] = {}
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Take the first snapshot, the one later polls compare with, then start the threads.
        What changed before it is not this module's business: reconcile (step 10) sees to it."""
        self._snapshot = take_snapshot(self.vault)
        self._threads = [
            threading.Thread(target=self._poll_until_stopped, name="watcher-poll", daemon=True),
            threading.Thread(target=self._work, name="watcher-jobs", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        """End the poller, let the worker finish the job in hand; True if both ended in time."""
        self._stopping.set()
        self.queue.close()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        stopped = not any(thread.is_alive() for thread in self._threads)
        if not stopped:
            log.warning("watcher: a job was still running after %.1f s; left to end with the process", timeout)
        return stopped

    def pending(self) -> int:
        """Jobs waiting or running."""
        return len(self.queue)

    # region poll
    def _poll_until_stopped(self) -> None:
        while not self._stopping.wait(self.poll_interval):
            try:
                self._poll()
            except Exception:  # the vault's folder gone for a moment (a network drive): try again
                log.exception("watcher: a poll failed")

    def _poll(self) -> None:
        """Compare the vault with the last snapshot and queue a job for every change."""
        snapshot = take_snapshot(self.vault)
        changes = compare(self._snapshot, snapshot)
        self._snapshot = snapshot
        for path in changes.created + changes.changed:
            self.queue.put(INDEX, path)
        for path in changes.deleted:
            self.queue.put(REMOVE, path)
        for old, new in changes.renamed:
            log.info("watcher: %s was renamed %s", old, new)
            self.queue.put(REMOVE, old)
            self.queue.put(INDEX, new)
        if changes.list_changed():
            self._tell(self.on_list_changed)
    # endregion poll

    # region work
    def _work(self) -> None:
        while (job := self.queue.take()) is not None:
            try:
                self._run(job)
            finally:
                self.queue.done()

    def _run(self, job: Job) -> None:
        try:
            (self.on_index if job.kind == INDEX else self.on_remove)(job.path)
        except Exception:
            if job.kind == INDEX and not (self.vault.root / job.path).is_file():
                log.info("watcher: %s vanished while it was indexed; removing it", job.path)
                self._run(Job(REMOVE, job.path, job.due))
                return
            log.exception("watcher: could not %s %s", job.kind, job.path)
        self._tell(self.on_note_changed, job.path)
    # endregion work

    @staticmethod
    def _tell(subscriber, *args) -> None:
        """Call a subscriber, if there is one; its failure is logged, not passed on."""
        if subscriber is None:
            return
        try:
            subscriber(*args)
        except Exception:
            log.exception("watcher: a subscriber failed")
