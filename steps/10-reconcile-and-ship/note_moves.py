"""move_note's write: a note moved or renamed, and every link to it rewritten, as one
edit that undo_edit can take back whole.

link_rewrite.plan_move says which notes change and what each holds after the move;
move_note here checks that plan against the vault and applies it: each note the plan
read must still hold the text it read (else nothing is written, and the answer names
the note), the moved note must still be the version the model read, and the target
must be free. Then each rewritten note is replaced whole (note_writes.replace_file),
the note is moved (a hard link under its new name, then the old name goes: never over
another file), and the journal gets one entry for all of it.

Step 8 has no watcher, so the link graph is told of the move here: the next move's
plan, and get_backlinks, see the note at its new path at once. From step 9 on, the
watcher sees the same files change and reads them again.
"""
import os
from contextlib import ExitStack

from journal import Change, Entry, real_for_new
from link_rewrite import plan_move
from note_writes import NoteText, StaleVersion, check_version, note_lock, replace_file, sync_folder, version_of
from vault import Vault, VaultError, path_parts, shown


# region move-note
def move_note(vault: Vault, policy, graph, path: str, to: str, version: str) -> tuple[Entry, list[str]]:
    """Move the note at `path` to `to`, links and all; the journal entry, and the notes changed."""
    old, real = vault.locate(path)
    new = target_path(to)
    for each in (old, new):
        policy.check(vault, each)
    plan = {rewrite.path: rewrite for rewrite in plan_move(vault, graph, old, new)}
    reals = sorted({real} | {vault.locate(note)[1] for note in plan})
    with ExitStack() as locks:  # every note the move writes, in one order: no two moves deadlock
        for each in reals:
            locks.enter_context(note_lock(each))
        before = {note: vault.read_bytes(note)[1] for note in {old} | set(plan)}
        check_version(old, before[old], version)
        for note, rewrite in plan.items():
            if read_text(note, before[note]) != rewrite.before:
                raise StaleVersion(f"{shown(note)} changed while the move was planned; nothing was written. "
                                   "Try the move again")
        entry = Entry("move_note")
        for note, rewrite in plan.items():
            after = encoded_like(note, before[note], rewrite.after)
            replace_file(vault, note, vault.locate(note)[1], before[note], after)
            entry.changes.append(Change(note, before[note], version_of(after)))
        moved = vault.read_bytes(old)[1]
        move_file(vault, real, new)
        entry.moves.append((old, new, version_of(moved)))
    graph.remove_note(old)
    for note in [new, *plan]:
        graph.update_note(note if note != old else new)
    return entry, sorted(new if note == old else note for note in plan)
# endregion move-note


def target_path(to: str) -> str:
    """The note's new vault path, judged like any path from a model; ".md" added if left out."""
    new = "/".join(path_parts(to))
    return new if new.endswith(".md") else new + ".md"


def read_text(path: str, data: bytes) -> str:
    """The text plan_move read: read_note's, a byte order mark left out, CR LF kept."""
    note = NoteText.decode(path, data)
    return note.text.replace("\n", "\r\n") if note.crlf else note.text


def encoded_like(path: str, data: bytes, text: str) -> bytes:
    """text as bytes the way the note's bytes were: its byte order mark and encoding."""
    note = NoteText.decode(path, data)
    return note.mark + text.encode(note.encoding)


def move_file(vault: Vault, real, new: str) -> None:
    target = real_for_new(vault, new)
    existing = next(folder for folder in [target.parent, *target.parent.parents] if folder.exists())
    if not existing.resolve().is_relative_to(vault.root):  # a symbolic link out, before any folder is made
        raise VaultError(f"{shown(new)} would be outside the vault; nothing was moved")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(real, target)  # never over a note that is there
    except FileExistsError:
        raise VaultError(f"{shown(new)} already exists; choose another name") from None
    os.unlink(real)  # the note lives on under its new name
    sync_folder(target.parent)
    sync_folder(real.parent)
