"""Every change to a note that exists goes through here: checked against the version
the model read, made under the note's lock, written whole or not at all.

change_note(vault, path, version, change) reads the note's bytes, refuses with
StaleVersion when they are no longer the bytes the model saw, lets `change` turn the
text into the new text, and puts the new bytes in place. It returns a Written: the
bytes before and after, which the journal keeps for undo_edit.

Decisions:
- A version is a hash of the note's bytes, as get_note read them: any change to the
  file, by anyone, changes it; rewriting the same bytes does not.
- Writes to one note wait for each other (note_lock): the bytes are read again under
  the lock, so of two edits made with one version the second finds a new version and
  is refused. The lock is the server's own; another program (Obsidian) writing at the
  same moment is caught by a last comparison just before the rename, which leaves a
  moment of microseconds, not the minutes between a model's read and its write.
- The new bytes go to a hidden temporary file beside the note, forced to disk, given
  the note's permissions, then renamed over the note: a reader (Obsidian, the
  watcher) sees the old note or the new one, never half of one, and a crash leaves
  at worst a hidden ".edit-*.tmp".
- The text `change` sees has "\\n" line endings when every line of the note ends in
  CRLF, and those are put back; a byte order mark and the encoding it names are kept.
  A note whose line endings are mixed is edited as it is: only the new text has "\\n".
"""
import hashlib
import os
import secrets
import stat
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from inbox import sync_folder  # the rename itself made durable, as create_note's new name is
from vault import BYTE_ORDER_MARKS, MAX_NOTE_BYTES, Vault, VaultError, note_text, shown


class StaleVersion(VaultError):
    """The note changed since the model read it: nothing was written."""


@dataclass
class Written:
    path: str  # the note's vault path
    before: bytes
    after: bytes

    @property
    def version(self) -> str:
        return version_of(self.after)


# region version
def version_of(data: bytes) -> str:
    """What get_note answers as `version`, and an edit must give back: a hash of the bytes."""
    return hashlib.sha256(data).hexdigest()[:16]


def check_version(path: str, data: bytes, version: str | None) -> None:
    current = version_of(data)
    if version is not None and version != current:
        raise StaleVersion(f"{shown(path)} has changed since it was read (version {shown(version)}, now "
                           f"{current}); nothing was written. Read it again with get_note, then edit what "
                           f"it says now, passing version {current}")
# endregion version


# region note-text
@dataclass
class NoteText:
    """A note's text as an edit sees it, and how to turn it back into the note's bytes."""

    text: str
    mark: bytes = b""  # the byte order mark the file starts with, if any
    encoding: str = "utf-8"
    crlf: bool = False  # every line ends in CRLF: the edit sees "\n", the write puts CRLF back

    @classmethod
    def decode(cls, path: str, data: bytes) -> "NoteText":
        mark, encoding = next(((m, e) for m, e in BYTE_ORDER_MARKS if data.startswith(m)), (b"", "utf-8"))
        text = note_text(path, data)  # NotText for a file that is not text
        crlf = "\n" in text and text.count("\r\n") == text.count("\n")
        return cls(text.replace("\r\n", "\n") if crlf else text, mark, encoding, crlf)

    def encode(self, text: str) -> bytes:
        return self.mark + (text.replace("\n", "\r\n") if self.crlf else text).encode(self.encoding)
# endregion note-text


# region change-note
def change_note(vault: Vault, path: str, version: str | None, change: Callable[[str], str]) -> Written:
    """Apply change(text) -> new text to the note, if its bytes are still those of `version`
    (None: whatever they are now). StaleVersion, and nothing written, if they are not."""
    relative, real = vault.locate(path)
    with note_lock(real):
        relative, before = vault.read_bytes(relative)
        check_version(relative, before, version)
        note = NoteText.decode(relative, before)
        after = not_too_large(relative, note.encode(change(note.text)))
        if after != before:
            replace_file(vault, relative, real, before, after)
        return Written(relative, before, after)
# endregion change-note


def not_too_large(path: str, data: bytes) -> bytes:
    if len(data) > MAX_NOTE_BYTES:  # the server would no longer read it
        raise VaultError(f"The edit would make {shown(path)} {len(data)} bytes, past the "
                         f"{MAX_NOTE_BYTES} a note may hold; nothing was written")
    return data


# region lock
_locks: dict[Path, threading.Lock] = {}
_locks_lock = threading.Lock()


@contextmanager
def note_lock(real: Path):
    """One write at a time to one file (by its real path, so two spellings share a lock)."""
    with _locks_lock:
        lock = _locks.setdefault(real, threading.Lock())
    with lock:
        yield
# endregion lock


# region replace-file
def replace_file(vault: Vault, path: str, real: Path, before: bytes, after: bytes) -> None:
    """Put `after` in place of the note at `real`, all at once, keeping its permissions;
    refused if the note is no longer `before` when the new file is ready."""
    mode = stat.S_IMODE(os.stat(real).st_mode)
    temporary = real.parent / f".edit-{secrets.token_hex(8)}.tmp"  # hidden: never a note, never indexed
    try:
        write_synced(temporary, after, mode)
        if vault.read_bytes(path)[1] != before:  # another program wrote meanwhile: its text wins
            raise StaleVersion(f"{shown(path)} was changed by another program a moment ago; nothing was "
                               "written. Read it again with get_note")
        os.replace(temporary, real)
        sync_folder(real.parent)
    except OSError as error:  # a full disk, a read-only folder: words for the model
        raise VaultError(f"{shown(path)} cannot be written: {error.strerror}; nothing was changed") from None
    finally:
        temporary.unlink(missing_ok=True)


def write_synced(path: Path, data: bytes, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    with open(os.open(path, flags, mode), "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.chmod(path, mode)  # the umask may have taken bits away at creation
# endregion replace-file
