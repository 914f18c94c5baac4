"""The journal of writes, and undo_edit: each write the server makes is kept, so that
it can be put back exactly, if nothing has touched its files since.

An entry is what one write did to the vault: the notes it changed, each with its
bytes before and the version it left (None: the note did not exist before, or does
not after), and the notes it moved (from, to). Journal.record keeps one and gives
its id; undo(vault, policy, journal, id) checks every file of the entry against what
the write left, refuses naming the first that differs, and otherwise puts back the
bytes before and moves each note back.

Decisions:
- The journal lives in the server's data folder, beside the index (never in the
  vault: it would show up among the notes), one JSON file per write, named by its id:
  1, 2, 3..., never given twice. It keeps the last MAX_ENTRIES writes, and drops the oldest while
  they take more than MAX_BYTES: a note is at most 1 MiB, and a write may touch many.
- Nothing is ever unlinked: a note that undo takes away (one create_note made) goes
  to the vault's .trash folder, as delete_note's notes do, and Obsidian shows it there.
- An entry undone is removed: undoing it twice would find its own files changed anyway.
"""
import base64
import json
import logging
import os
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path

from note_writes import StaleVersion, note_lock, replace_file, sync_folder, version_of, write_synced
from vault import NoteNotFound, Vault, VaultError, path_parts, shown

log = logging.getLogger("journal")

MAX_ENTRIES = 100
MAX_BYTES = 50 * 1024 * 1024
LAST_ID = "last-id"
TRASH = ".trash"  # Obsidian's own: Settings > Files and links > Deleted files


@dataclass
class Change:
    path: str
    before: bytes | None  # None: the note did not exist before the write
    after: str | None  # the version the write left; None: it left no note there


@dataclass
class Entry:
    tool: str
    changes: list[Change] = field(default_factory=list)
    moves: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, version of the note moved)


# region journal
class Journal:
    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.lock = threading.Lock()

    def record(self, entry: Entry) -> str:
        data = {"tool": entry.tool, "moves": entry.moves, "changes": [
            {"path": c.path, "after": c.after,
             "before": None if c.before is None else base64.b64encode(c.before).decode("ascii")}
            for c in entry.changes]}
        with self.lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            edit_id = self.next_id()
            write_synced(self.folder / f"{edit_id}.json", json.dumps(data).encode("utf-8"), 0o600)
            self.prune()
        return edit_id

    def next_id(self) -> str:
        """One more than the last id ever given here, kept in LAST_ID: an id is never given
        twice, so an old id cannot undo a newer write."""
        counter = self.folder / LAST_ID
        number = int(counter.read_text() or 0) + 1 if counter.is_file() else 1
        while (self.folder / f"{number}.json").exists():  # another server on this vault gave it
            number += 1
        counter.write_text(str(number))
        return str(number)

    def prune(self) -> None:
        """Keep the last MAX_ENTRIES entries, and no more than MAX_BYTES of them."""
        entries = sorted(self.folder.glob("*.json"), key=lambda file: int(file.stem), reverse=True)  # newest first
        total = 0
        for number, file in enumerate(entries):
            total += file.stat().st_size
            if number >= MAX_ENTRIES or total > MAX_BYTES:
                file.unlink(missing_ok=True)  # the journal's own file, never a note

    def read(self, edit_id: str) -> Entry:
        file = self.folder / f"{edit_id}.json"
        if not edit_id.isdigit() or not file.is_file():
            raise VaultError(f"No edit {shown(edit_id)} in the journal: it keeps the last {MAX_ENTRIES} "
                             "writes, and an edit undone once is gone")
        data = json.loads(file.read_bytes())
        changes = [Change(c["path"], None if c["before"] is None else base64.b64decode(c["before"]), c["after"])
                   for c in data["changes"]]
        return Entry(data["tool"], changes, [tuple(move) for move in data["moves"]])

    def forget(self, edit_id: str) -> None:
        (self.folder / f"{edit_id}.json").unlink(missing_ok=True)
# endregion journal


# region undo
def undo(vault: Vault, policy, journal: Journal, edit_id: str) -> list[str]:
    """Put back what the edit `edit_id` did; the vault paths it restored."""
    with journal.lock:
        entry = journal.read(edit_id)
        paths = [c.path for c in entry.changes] + [p for move in entry.moves for p in move[:2]]
        for path in paths:
            if not path.startswith(TRASH + "/"):
                policy.check(vault, path)
        moved_to = {source: target for source, target, _ in entry.moves}  # a moved note is checked where it is
        for change in entry.changes:  # every file first: all put back, or none
            check_unchanged(vault, moved_to.get(change.path, change.path), change.after)
        for source, target, version in entry.moves:
            check_unchanged(vault, source, None)
            check_unchanged(vault, target, version)
        for source, target, _ in reversed(entry.moves):
            move_note_file(vault, target, source)
        for change in entry.changes:
            restore(vault, change)
        journal.forget(edit_id)
    log.info("undid the edit %s (%s)", edit_id, entry.tool)
    return sorted(set(paths))
# endregion undo


def current_bytes(vault: Vault, path: str) -> bytes | None:
    """The note's bytes now, None if there is none; a note in the trash too, which
    the vault's rules hide from every tool."""
    if path.startswith(TRASH + "/"):
        real = vault.root / path
        if real.is_symlink() or not real.is_file():
            return None
        return real.read_bytes()
    try:
        return vault.read_bytes(path)[1]
    except NoteNotFound:
        return None


def check_unchanged(vault: Vault, path: str, version: str | None) -> None:
    data = current_bytes(vault, path)
    if (None if data is None else version_of(data)) != version:
        raise StaleVersion(f"{shown(path)} has changed since that edit, so undoing it would lose what changed; "
                           "nothing was undone. Read the note and edit it back by hand")


def restore(vault: Vault, change: Change) -> None:
    current = current_bytes(vault, change.path)
    if change.before is None:
        if current is not None:  # the write made this note: it goes to the trash, never unlinked
            move_to_trash(vault, change.path)
        return
    if current is None:
        real = real_for_new(vault, change.path)
        with note_lock(real):
            write_new(real, change.before)
        return
    relative, real = vault.locate(change.path)
    with note_lock(real):
        replace_file(vault, relative, real, current, change.before)


# region trash
def move_to_trash(vault: Vault, path: str) -> str:
    """Move the note to the vault's .trash folder, as Obsidian's "move to Obsidian trash"
    does; a name taken there gets " 2", " 3"... The note's path in the trash."""
    relative, real = vault.locate(path)
    if (vault.root / relative).is_symlink():
        raise VaultError(f"{shown(relative)} is a symbolic link; delete it in Obsidian, not through the server")
    trash = vault.root / TRASH
    trash.mkdir(exist_ok=True)
    if trash.is_symlink() or not trash.is_dir():
        raise VaultError(f"The vault's {TRASH} is not a folder of its own; nothing was deleted")
    stem, name = real.stem, real.name
    for number in range(1, 1000):
        target = trash / (name if number == 1 else f"{stem} {number}{real.suffix}")
        try:
            os.link(real, target)  # never over a note already in the trash
        except FileExistsError:
            continue
        os.unlink(real)  # the note lives on under its name in the trash
        sync_folder(trash)
        sync_folder(real.parent)
        return f"{TRASH}/{target.name}"
    raise VaultError(f"The trash holds too many notes named {shown(name)}; empty it in Obsidian")
# endregion trash


def move_note_file(vault: Vault, source: str, target: str) -> None:
    """Move a note within the vault (the trash included), never over another file."""
    real_source = vault.root / source
    real_target = real_for_new(vault, target)
    real_target.parent.mkdir(parents=True, exist_ok=True)
    os.link(real_source, real_target)
    os.unlink(real_source)
    sync_folder(real_target.parent)
    sync_folder(real_source.parent)


def real_for_new(vault: Vault, path: str) -> Path:
    """Where a note that does not exist yet would be: its folder checked like any path."""
    parts = path.split("/")
    if parts[0] != TRASH:
        path_parts(path)  # no "..", nothing hidden
    folder = vault.root.joinpath(*parts[:-1])
    if folder.exists() and not folder.resolve().is_relative_to(vault.root):
        raise VaultError(f"{shown(path)} would be written outside the vault; nothing was written")
    return folder / parts[-1]


def write_new(real: Path, data: bytes) -> None:
    real.parent.mkdir(parents=True, exist_ok=True)
    temporary = real.parent / f".undo-{secrets.token_hex(8)}.tmp"
    try:
        write_synced(temporary, data, 0o644)
        os.link(temporary, real)  # never over a note made meanwhile
        sync_folder(real.parent)
    finally:
        temporary.unlink(missing_ok=True)
