"""Edits made while the server was off: bring the stored index up to date at startup.

While the server runs, the watcher (step 9) sees every edit. What happened while it
was stopped (notes written in Obsidian, synced from a phone, renamed, deleted) shows
only when the vault is compared with the index. Embedding every note again at each
start would be correct, and would take minutes with Ollama; reconcile does work in
proportion to what changed:

1. A note the index holds but the vault no longer has is dropped.
2. A note whose size and modification time (one stat, nothing read) equal the stamp
   stored with it when it was indexed is unchanged. That is nearly every note, at
   the cost of one stat each.
3. Any other note (new, edited, or only touched: a sync client or a git checkout
   rewrites times without changing a byte) is read and cut into chunks. Chunks equal
   to those the index holds: only the stamp and links are renewed. Different: it is
   embedded.

It ends with one line: "reconciled: 3 new, 2 changed, 1 removed, 120 unchanged
(4 touched but equal)".

Decisions:
- The content check compares chunks, not a hash of the file. The chunks are what gets
  embedded, and the index already holds them, so nothing more is stored, and a note
  is read once: with a separate hash, the read that is hashed and the read that is
  chunked could see two versions of the note. It also means an index stored without
  stamps (step 7's to 9's wrote none) is stamped on its first reconcile, every note
  counted as touched, without embedding anything. VaultIndex.rebuild stamps what it
  builds, so the start after a rebuild reads nothing.
- The link graph's entry of a note (links.py) is kept in its meta beside the stamp,
  cut from the same read as its chunks, so a restart loads the graph instead of
  parsing every note, and the stamp says which entries are stale. The server answers
  from what is stored while reconcile runs; vault_index.stale counts the notes left.
- The stamp is taken before the note is read. An edit made during the read leaves a
  newer time on the file than the stamp says, so the next start looks again.
- It may run while the watcher runs (start the watcher first: its first poll is
  what it compares with, so an edit made during reconcile is seen). If a note
  changes while reconcile embeds it, the older text is not stored: it could land
  over what the watcher stored of the newer one. The watcher's job, or the next
  start, indexes the newer text.
- A time is trusted only once it is old (RECENT_NS). A file system counts time in
  ticks (a few milliseconds, or two seconds on FAT): a same-size edit within the
  tick of the stamp would keep both size and time, and be missed for good. So a
  stamp whose time is recent is stored without its time, and the next start reads
  that note again; vault.py treats folder times the same way.
- An edit that keeps both size and time is not seen. rsync and git make the same bet.
- Stopped part way (a crash, Ollama gone), it resumes: each note's chunks, vectors
  and stamp are one file, replaced atomically (index.py), so every note is either
  reconciled or as it was, and the next start does the rest, nothing twice.
- An index that cannot be used as it is (none yet, damaged, made by another embedder
  or dimension) is refused with index.py's own IndexUnusable before anything is
  changed; the caller builds a new one.
- A renamed note is a removed note and a new one: its chunks carry its title and
  path, so it is embedded again.
"""
import logging
import os
import time
from dataclasses import dataclass

from links import entry_to_store

log = logging.getLogger("reconcile")

RECENT_NS = 2 * 10**9  # a modification time younger than this proves nothing yet

# What refresh_note found, as Report counts it.
NEW, CHANGED, EQUAL, REMOVED = "new", "changed", "equal", "removed"


@dataclass
class Report:
    new: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    touched: int = 0  # of the unchanged, those read because their stamp differed

    def add(self, outcome: str | None) -> None:
        """Count what refresh_note found. NEW, CHANGED and REMOVED name their counters."""
        if outcome == EQUAL:
            self.unchanged += 1
            self.touched += 1
        elif outcome is not None:
            setattr(self, outcome, getattr(self, outcome) + 1)

    def __str__(self) -> str:
        return (f"reconciled: {self.new} new, {self.changed} changed, {self.removed} removed, "
                f"{self.unchanged} unchanged ({self.touched} touched but equal)")


# region reconcile
def reconcile(vault_index) -> Report:
    """Load the stored index and link graph into vault_index and bring them up to date with the vault.

    vault_index is a VaultIndex (load_stored, reading_notes, its vault, embedder and read_parts are used).
    It answers from what is stored as soon as that is loaded; its `stale` counts down the
    notes not yet looked at, for those answers to say. Raises IndexUnusable, having
    changed nothing, when the stored index cannot be used: then rebuild it."""
    index, graph = vault_index.load_stored()
    vault_index.reading_notes()  # the first note is listed below, the watcher's snapshot first
    report = Report()
    on_disk = vault_index.vault.all_notes()  # Obsidian's excluded files are stored for their links
    stored = index.note_meta()
    gone = stored.keys() - set(on_disk)
    vault_index.stale = len(gone) + len(on_disk)
    for path in gone:
        index.remove_note(path)
        graph.remove_note(path)
        report.removed += 1
        vault_index.stale -= 1
    for path in on_disk:
        stamp = stamp_of(vault_index.vault, path)
        if stamp is not None and stamp == stamp_in(stored.get(path)) and path in graph:
            report.unchanged += 1  # its chunks and links as stored: not read at all
        else:
            report.add(refresh_note(vault_index, path))
        vault_index.stale -= 1
    return report

# endregion reconcile


# region refresh-note
def refresh_note(vault_index, path: str) -> str | None:
    """Bring what the index and the link graph hold of one note up to date with its file,
    embedding it only if its chunks changed; store its stamp and links with it. Returns
    what it found: NEW, CHANGED, EQUAL or REMOVED (None: no file, and nothing held)."""
    index, graph = vault_index.chunk_index, vault_index.links
    stored = index.meta_of(path)
    stamp = stamp_of(vault_index.vault, path)  # before the read: see the module's docstring
    if stamp is None:
        index.remove_note(path)
        graph.remove_note(path)
        return None if stored is None else REMOVED
    chunks, links = vault_index.read_parts(path)  # one read: the chunks and links stored agree
    # The stamp is judged now ("recent" means recent when the note is read); the links go with it.
    meta = stamp_to_store(stamp) | {"links": entry_to_store(links)}
    if stored is not None and chunks == index.chunks_of(path):
        index.set_meta(path, meta)
        graph.put(path, links)
        return EQUAL
    vectors = vault_index.embedder.embed_documents([chunk.text for chunk in chunks]) if chunks else []
    if stamp_of(vault_index.vault, path) != stamp:
        return CHANGED  # edited while it was embedded: leave it to the newer text (see the docstring)
    # An empty note is stored too, without chunks, so that its stamp is kept.
    index.update_note(path, chunks, vectors, meta=meta)
    graph.put(path, links)
    log.debug("reconcile: embedded %s", path)
    return NEW if stored is None else CHANGED

# endregion refresh-note


# region stamps
def stamp_of(vault, path: str) -> dict | None:
    """The note's size and modification time, as stamps compare them; None if it is gone.
    An excluded file (Obsidian's setting) says so: excluded or not since the last start,
    its stamp differs, and it is read again, into search or out of it."""
    try:
        info = os.stat(vault.root / path)
    except OSError:
        return None
    stamp = {"size": info.st_size, "mtime_ns": info.st_mtime_ns}
    return stamp | {"excluded": True} if vault.excluded(path) else stamp


def stamp_in(meta: dict | None) -> dict | None:
    """The stamp kept in a note's stored meta, beside its links; None if there is none."""
    if meta is None:
        return None
    stamp = {"size": meta.get("size"), "mtime_ns": meta.get("mtime_ns")}
    return stamp | {"excluded": True} if meta.get("excluded") else stamp


def stamp_to_store(stamp: dict) -> dict:
    """The stamp without its time if that time is too recent to trust: a stored time of
    None equals no time on disk, so the next start reads the note again."""
    if stamp["mtime_ns"] >= time.time_ns() - RECENT_NS:
        return stamp | {"mtime_ns": None}
    return stamp
# endregion stamps
