"""The one place that turns a path a model sent into a file of the vault.

Every path from a model is untrusted. Vault.locate judges it as text first, then
on disk, and raises VaultError, with a message written for the model, when it may
not be read; the caller turns that into an error result and the server goes on.

Decisions:
- Paths are relative to the vault root and use '/'. A '\\' is read as '/' before
  anything is judged, so a Windows-style path gets the same verdict on every system.
- Paths are taken literally: '%2e%2e' is an odd file name, not '..'. Percent-decoding
  belongs to URIs, and happens once, in uri_to_path.
- '..' is refused anywhere, even where it would stay inside ('a/../b'): no note
  needs it, and one rule is easier to trust than a computation.
- A path longer than MAX_PATH_CHARS (4096) is refused first: no system opens one, and
  Unicode normalisation of a long run of accents costs the square of its length.
- A name starting with '.' (.obsidian, .trash, .git, .env) is not part of the
  notes, at any depth: refused by locate, skipped by list_notes.
- '.md' is optional: 'Bread/Focaccia' finds 'Bread/Focaccia.md', as an Obsidian
  link would. Only .md files are notes.
- Unicode: a path is tried as sent, then in NFC and NFD form. macOS may store 'é' as
  'e' plus a combining accent (NFD), Linux keeps whatever bytes were written, and
  models type NFC. A path is reported in the spelling that found the file. A name
  whose bytes are not UTF-8 is not listed: JSON could not carry it as text.
- Symlinks are followed, but the file they lead to must be inside the vault (and
  not hidden), checked after resolving them. The checked file is then opened without
  following any link (open_inside), so a name swapped for one a moment after the
  check leads nowhere. list_notes does not enter symlinked folders: no loops, no
  escapes, no note listed twice; a folder it cannot read is logged once.
- Hard links: one file may have several names, and nothing in it says where the
  others are: outside the vault, or in .obsidian, or in a denied folder. A file with more
  than one link is served only if every one of its names is a note the vault lists
  (HardLinks); otherwise it is left out of the listing, and refused when read. The
  read checks the file it opened, so a link made after the listing changes nothing.
- The deny list (--exclude) names folders the server must never show, or notes: a
  denied note is as absent as a note that does not exist, to every tool, resource,
  index and the watcher, since each reads through here. A folder is compared by its
  segments, ignoring case and Unicode spelling ('Private', 'private', an NFD 'Privé'):
  denying too much is the safe mistake. A denied name is never looked up on disk, and
  where a symbolic link leads is judged as well as its name.
- Obsidian's excluded files (excluded_files.py) are not hidden: list_notes leaves them
  out, as Obsidian's search does, but they can be opened, and all_notes has them.
- A note larger than MAX_NOTE_BYTES (1 MiB) is refused, with its size: it would
  not fit a model's context anyway.
- Text is UTF-8, or UTF-16 when a byte order mark says so; the mark is dropped.
  A file that does not decode, or holds a NUL (binary files do, text does not), is
  refused as not text: served as U+FFFD characters, it would only be noise.
"""
import base64
import bisect
import codecs
import errno
import json
import logging
import os
import stat
import threading
import time
import unicodedata
from pathlib import Path, PureWindowsPath
from urllib.parse import quote, unquote

from excluded_files import ExcludedFiles

MAX_NOTE_BYTES = 1024 * 1024
MAX_PATH_CHARS = 4096  # the longest path Linux opens, in bytes; macOS's is shorter
NOTE_SUFFIX = ".md"
EXAMPLE = '"Folder/Note.md"'

log = logging.getLogger("vault")


class VaultError(Exception):
    """A path the model sent that cannot be read; the message tells the model why."""


class NoteNotFound(VaultError):
    """Nothing there (for resources/read: 'resource not found')."""


class NotText(VaultError):
    """A .md file whose bytes are not text: binary, or in an encoding it does not name."""


class InvalidCursor(VaultError):
    """A pagination cursor this server did not hand out."""


# region path-as-text
def path_parts(user_path) -> list[str]:
    """The segments of a path the model sent, judged as text alone."""
    if not isinstance(user_path, str):
        raise VaultError(f"A path must be a string, like {EXAMPLE}; got {shown(user_path)}")
    if not user_path.strip():
        raise VaultError(f"The path is empty; give a path relative to the vault, like {EXAMPLE}")
    if len(user_path) > MAX_PATH_CHARS:  # before anything reads it: NFC/NFD cost the square of some
        raise VaultError(f"The path is {len(user_path)} characters long; no path in a vault is longer than "
                         f"{MAX_PATH_CHARS}")
    if "\0" in user_path:
        raise VaultError(f"{shown(user_path)} contains a NUL character, which no file name can contain")
    if not is_text(user_path):
        raise VaultError(f"{shown(user_path)} contains an unpaired surrogate, which no file name can contain")
    path = user_path.replace("\\", "/")
    # One test for '/etc', '//server/share', 'C:/x' and 'C:x': each has a Windows anchor.
    if PureWindowsPath(path).anchor:
        raise VaultError(f"{shown(user_path)} is absolute; give a path relative to the vault, like {EXAMPLE}")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise VaultError(f"{shown(user_path)} contains '..'; paths stay inside the vault")
    if hidden(parts):
        raise VaultError(
            f"{shown(user_path)} goes into {shown(hidden(parts))}: names starting with '.' "
            "(like .obsidian or .trash) are not notes"
        )
    return parts
# endregion path-as-text


def is_text(value: str) -> bool:
    """False for a string with an unpaired surrogate: JSON's \\ud800 escape can carry
    one, but it is no character, and the file system cannot encode it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def spellings(relative: str) -> list[str]:
    """relative as sent, then composed (NFC) and decomposed (NFD), without repeats."""
    forms = [relative, unicodedata.normalize("NFC", relative), unicodedata.normalize("NFD", relative)]
    return list(dict.fromkeys(forms))


def hidden(parts) -> str | None:
    """The first part that starts with '.', if any."""
    return next((part for part in parts if part.startswith(".")), None)


class Vault:
    def __init__(self, root, deny=()):
        self.root = Path(root).resolve(strict=True)  # once: every check compares with this
        if not self.root.is_dir():
            raise NotADirectoryError(f"The vault {root} is not a folder")
        # What denied() compares with: each entry as a folder and, most often, as a note too.
        self.denied_folders = tuple(prefix for name in deny for prefix in denied_prefixes(name))
        self.excluded = ExcludedFiles.read(self.root)
        self._lock = threading.Lock()  # handler threads share the listing below
        self._listing: list[str] | None = None
        self._shown: list[str] = []
        self._folder_times: dict[str, int] = {}
        self._whole_files: set[tuple[int, int]] = set()  # see HardLinks
        self._walked_at = 0
        self._unreadable: set[str] = set()  # folders already logged, so each is said once

    def resolve(self, user_path) -> Path:
        """The real file of the note user_path names, or a VaultError saying why not."""
        return self.locate(user_path)[1]

    def locate(self, user_path) -> tuple[str, Path]:
        """The note's vault-relative path as found on disk, and its real file."""
        parts = path_parts(user_path)
        if not parts:
            raise VaultError(f"{shown(user_path)} names the vault itself; give a note, like {EXAMPLE}")
        relative, info = self.find_note("/".join(parts))
        real = self.real_inside(relative)
        if self.denied_real(real):  # a symbolic link into a denied folder: as absent as its target
            raise no_note(relative)
        if stat.S_ISDIR(info.st_mode):
            raise VaultError(f"{shown(relative)} is a folder, not a note; list that folder to see its notes")
        if not relative.endswith(NOTE_SUFFIX):
            raise VaultError(f"{shown(relative)} is not a note: only Markdown files (.md) are notes")
        if not stat.S_ISREG(info.st_mode):
            raise VaultError(f"{shown(relative)} is not a regular file")
        if info.st_size > MAX_NOTE_BYTES:
            raise too_large(relative, info.st_size)
        return relative, real

    def find_note(self, relative: str) -> tuple[str, os.stat_result]:
        """Try the name with '.md' added first, as an Obsidian link means, then as sent."""
        names = [relative] if relative.endswith(NOTE_SUFFIX) else [relative + NOTE_SUFFIX, relative]
        for name in names:
            found = None if self.denied(name) else self.lookup(name)  # never looked for: no trace
            if found:
                return found
        raise no_note(relative)

    # region deny-list
    def denied(self, relative: str) -> bool:
        """True if the vault path is in a denied folder or is a denied note, however it is spelled."""
        if not self.denied_folders:
            return False
        return (comparable(relative) + "/").startswith(self.denied_folders)  # each ends with '/'

    def denied_real(self, real: Path) -> bool:
        """The same for the real path, after symlinks: a link to a denied note is denied."""
        return self.denied(real.relative_to(self.root).as_posix())
    # endregion deny-list

    def lookup(self, relative: str) -> tuple[str, os.stat_result] | None:
        """relative as it is spelled on disk, and what stat says of it; None if absent."""
        for spelling in spellings(relative):
            try:
                return spelling, os.stat(self.root / spelling)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as error:  # too long, a symlink loop, no permission: words, not a traceback
                raise VaultError(f"{shown(relative)} cannot be opened: {error.strerror}") from None
        return None

    # region real-inside
    def real_inside(self, relative: str) -> Path:
        """Where relative really is, after symlinks; it must be a visible part of the vault."""
        try:
            real = (self.root / relative).resolve()
        except (OSError, RuntimeError):  # Python 3.11 reports a symlink loop as RuntimeError
            raise VaultError(f"{shown(relative)} cannot be followed: its symbolic links loop") from None
        if not self.allowed(real):
            raise VaultError(
                f"{shown(relative)} leads outside the vault, or into a hidden folder, through a symbolic link; "
                "it cannot be read"
            )
        return real

    def allowed(self, real: Path) -> bool:
        return real.is_relative_to(self.root) and not hidden(real.relative_to(self.root).parts)
    # endregion real-inside

    def read_note(self, user_path) -> tuple[str, str]:
        """(the note's vault-relative path, its text). Every read of a note's text,
        by a tool, a resource, the index or the watcher, comes through here."""
        relative, data = self.read_bytes(user_path)
        return relative, note_text(relative, data)

    def read_bytes(self, user_path) -> tuple[str, bytes]:
        """(the note's vault-relative path, its bytes as they are on disk): what a write
        compares with, and what a note's version is made of."""
        relative, real = self.locate(user_path)
        try:
            with open(open_inside(self.root, real), "rb") as file:
                self.check_hard_links(relative, os.fstat(file.fileno()))  # the file opened, not the one listed
                data = file.read(MAX_NOTE_BYTES + 1)  # never more, even if the file grew
        except FileNotFoundError:
            raise NoteNotFound(f"{shown(relative)} was deleted or moved a moment ago; list the notes again") from None
        except OSError as error:
            if error.errno in SWAPPED:
                raise VaultError(f"{shown(relative)} was replaced by a symbolic link as it was opened; "
                                 "nothing was read, try again") from None
            raise VaultError(f"{shown(relative)} cannot be read: {error.strerror}") from None
        if len(data) > MAX_NOTE_BYTES:
            raise too_large(relative, len(data))
        return relative, data

    def list_notes(self, folder=None) -> list[str]:
        """The vault-relative paths of the notes in folder and its subfolders, sorted.
        folder is judged like any path from a model; None means the whole vault."""
        notes = self.listings()[1]
        if folder is None:
            return notes
        _, prefix = self.find_folder(folder)
        return [note for note in notes if note.startswith(prefix)]

    def all_notes(self) -> list[str]:
        """Every note of the vault, Obsidian's excluded files too (not the denied ones)."""
        return self.listings()[0]

    def listings(self) -> tuple[list[str], list[str]]:
        """(every note, those Obsidian's excluded files leave), from the last walk while
        no folder has changed.

        Adding, removing or renaming a file changes its folder's modification time,
        so checking for changes costs one stat per folder, not a read of every
        folder: a few milliseconds for ten thousand notes instead of tens."""
        with self._lock:
            if self._listing is None or self.folders_changed():
                self._walked_at = time.time_ns()
                self._listing, self._folder_times, self._whole_files = self.walk()
                self._shown = [note for note in self._listing if not self.excluded(note)]  # as Obsidian's search
            return self._listing, self._shown

    def folders_changed(self) -> bool:
        for folder, seen in self._folder_times.items():
            try:
                now = os.stat(folder).st_mtime_ns
            except OSError:
                return True
            # A change in the same clock tick as the walk would leave the time as it
            # was (some file systems count in whole seconds): recent times prove nothing.
            if now != seen or now >= self._walked_at - 2 * 10**9:
                return True
        return False

    def check_hard_links(self, relative: str, opened: os.stat_result) -> None:
        """Refuse a file with another name, unless each of its names is a note the vault lists."""
        if opened.st_nlink > 1:
            self.listings()  # walks again if a folder has changed
            if (opened.st_dev, opened.st_ino) not in self._whole_files:
                raise VaultError(f"{shown(relative)} is a file with {opened.st_nlink} names (hard links), and not "
                                 "all of them are notes of this vault; such a file is not served")

    def walk(self) -> tuple[list[str], dict[str, int], set[tuple[int, int]]]:
        """(every note, sorted; each folder walked and its modification time; the files of
        several names whose every name is a note listed here)."""
        notes, times, pending, linked = [], {}, [(str(self.root), "")], HardLinks()
        while pending:
            directory, prefix = pending.pop()
            try:
                times[directory] = os.stat(directory).st_mtime_ns  # before reading: a later change shows
                entries = list(os.scandir(directory))
            except FileNotFoundError:
                continue  # deleted since its parent was read
            except OSError as error:  # it hides its own notes, not everyone else's, and says so
                self.report_unreadable(prefix.rstrip("/") or ".", error)
                continue
            for entry in entries:
                # Hidden names are not notes; a '\\' in a name could never be asked for, nor
                # could a name whose bytes are not UTF-8 (Python reads them as lone surrogates).
                if entry.name.startswith(".") or "\\" in entry.name or not is_text(entry.name):
                    continue
                if self.denied(prefix + entry.name):  # never entered, never listed
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, prefix + entry.name + "/"))
                elif self.is_note(entry):
                    notes.append(prefix + entry.name)
                    linked.add(prefix + entry.name, entry)
        shared, whole = linked.judged()
        return sorted(note for note in notes if note not in shared), times, whole

    def report_unreadable(self, folder: str, error: OSError) -> None:
        if folder not in self._unreadable:
            self._unreadable.add(folder)
            log.warning("vault: skipping the folder %s, which cannot be read (%s): its notes are not listed",
                        shown(folder), error.strerror)

    def is_note(self, entry: os.DirEntry) -> bool:
        """A .md file; if it is a symlink, one that leads to a visible file of the vault."""
        if not entry.name.endswith(NOTE_SUFFIX):
            return False
        if not entry.is_symlink():
            return entry.is_file()
        try:
            real = Path(entry.path).resolve(strict=True)
        except (OSError, RuntimeError):  # a broken or looping link is no note
            return False
        return real.is_file() and self.allowed(real) and not self.denied_real(real)

    def find_folder(self, folder) -> tuple[Path, str]:
        """The folder's real path and the prefix its notes are listed with ('Bread/')."""
        parts = path_parts(folder)
        if not parts:
            return self.root, ""
        found = None if self.denied("/".join(parts)) else self.lookup("/".join(parts))
        if found is None:
            raise NoteNotFound(f"No folder {shown(folder)} in the vault; omit the folder to list every note")
        relative, info = found
        real = self.real_inside(relative)
        if self.denied_real(real):
            raise NoteNotFound(f"No folder {shown(folder)} in the vault; omit the folder to list every note")
        if not stat.S_ISDIR(info.st_mode):
            raise VaultError(f"{shown(relative)} is not a folder")
        return real, relative + "/"


class HardLinks:
    """The notes of one walk whose files have more than one name (hard link), judged once
    the walk is done. Such a file is whole if the walk listed every one of its names as a
    note; any other name may be outside the vault, or in a folder the server hides, and
    serving the file under its name here would serve that one too. Most files have one
    name and cost nothing here but a stat."""

    def __init__(self):
        self.file_of: dict[str, tuple[int, int]] = {}  # note -> (device, inode) of its file
        self.links: dict[tuple[int, int], int] = {}  # file -> how many names it has
        self.listed: dict[tuple[int, int], int] = {}  # file -> how many of them the walk listed

    def add(self, note: str, entry: os.DirEntry) -> None:
        try:
            info = entry.stat()  # a symbolic link's file: the one that would be read
            if info.st_nlink == 0:  # Windows leaves the count out of a DirEntry's stat
                info = os.stat(entry.path)
        except OSError:  # deleted since the folder was read: a read will say so
            return
        if info.st_nlink > 1:
            file = (info.st_dev, info.st_ino)
            self.file_of[note], self.links[file] = file, info.st_nlink
            if not entry.is_symlink():  # a symbolic link is another path, not another name
                self.listed[file] = self.listed.get(file, 0) + 1

    def judged(self) -> tuple[set[str], set[tuple[int, int]]]:
        """(the notes to leave out, the files whole)."""
        whole = {file for file, links in self.links.items() if self.listed.get(file, 0) >= links}
        return {note for note, file in self.file_of.items() if file not in whole}, whole


def no_note(relative: str) -> NoteNotFound:
    return NoteNotFound(
        f"No note {shown(relative)} in the vault. Paths are relative to the vault root, "
        f"like {EXAMPLE}; list the notes to see which exist"
    )


# region comparable
def denied_prefixes(name) -> tuple[str, ...]:
    """An entry of the deny list, judged like a model's path, as denied() compares it:
    'Journal/Health' -> 'journal/health/', so that 'journal/healthy' is not in it, and
    'journal/health.md/': an entry may name a note by its path without .md. An entry
    that ends with a slash names a folder alone."""
    parts = path_parts(name)
    if not parts:
        raise VaultError(f"{shown(name)} names the whole vault; name a folder inside it")
    folder = comparable("/".join(parts))
    return (folder + "/",) if str(name).endswith(("/", "\\")) else (folder + "/", folder + ".md/")


def comparable(relative: str) -> str:
    """One spelling for every way of writing a path: '/' only, no empty or '.' segments,
    case folded, Unicode composed."""
    parts = [part for part in relative.replace("\\", "/").split("/") if part not in ("", ".")]
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", "/".join(parts)).casefold())
# endregion comparable


SWAPPED = {errno.ELOOP, errno.EMLINK, errno.ENOTDIR}  # what open says when it meets a link it may not follow
NAME_BY_NAME = hasattr(os, "O_NOFOLLOW") and os.open in os.supports_dir_fd  # not on Windows
READ = os.O_RDONLY | getattr(os, "O_BINARY", 0)  # Windows would otherwise turn CR LF into LF
# A named pipe swapped in for a note would make a plain open wait for a writer forever.
READ |= getattr(os, "O_NONBLOCK", 0)


def open_inside(root: Path, real: Path) -> int:
    """A descriptor for real, the resolved path of a note that real_inside checked.

    Between that check and this open, another process may rename a symbolic link to a
    file outside the vault over the note, or over a folder above it; open(real) would
    follow it. So this open follows no link at all. The check resolved every link the
    path had, so what is left is a chain of real folders and one file."""
    names = real.relative_to(root).parts
    if not names:  # a link swapped in after the stat may resolve to the vault itself
        raise IsADirectoryError(errno.EISDIR, "the vault is a folder")
    descriptor = open_name_by_name(root, names) if NAME_BY_NAME else open_same_file(real)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # a pipe, a device, a folder
        os.close(descriptor)
        raise OSError(errno.EINVAL, "not a plain file")
    return descriptor


# region open-inside
def open_name_by_name(root: Path, names: tuple[str, ...]) -> int:
    """Each name opened inside the folder opened before it, with O_NOFOLLOW: a link
    anywhere on the way, the note or a folder above it, is refused, never followed."""
    folder = os.open(root, os.O_RDONLY)
    try:
        for name in names[:-1]:
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(names[-1], READ | os.O_NOFOLLOW, dir_fd=folder)
    finally:
        os.close(folder)
# endregion open-inside


def open_same_file(real: Path) -> int:
    """Where open cannot refuse links (Windows): open by path, then make sure the open
    file is the one that was at real a moment before, when it was no link (same device,
    same inode). That catches a note swapped for a link, not a folder above it."""
    checked = os.stat(real, follow_symlinks=False)
    descriptor = os.open(real, READ)
    opened = os.fstat(descriptor)
    if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino):
        os.close(descriptor)
        raise OSError(errno.ELOOP, "the file changed between the check and the open")
    return descriptor


BYTE_ORDER_MARKS = [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")]


def note_text(relative: str, data: bytes) -> str:
    """The text of a note: UTF-8, unless a byte order mark names another encoding."""
    encoding = "utf-8"
    for mark, name in BYTE_ORDER_MARKS:
        if data.startswith(mark):
            encoding, data = name, data[len(mark) :]
            break
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise NotText(f"{shown(relative)} is not {encoding.upper()} text (byte {error.start} does not decode); "
                      "it is not served") from None
    if "\0" in text:
        raise NotText(f"{shown(relative)} holds NUL characters: a binary file, not text; it is not served")
    return text


def too_large(relative: str, size: int) -> VaultError:
    return VaultError(
        f"{shown(relative)} is {size / 2**20:.1f} MiB ({size} bytes); "
        f"notes larger than {MAX_NOTE_BYTES // 2**20} MiB are not served"
    )


def shown(value, limit: int = 100) -> str:
    """value quoted as JSON, so odd characters are visible, and cut short when long."""
    # backslashreplace spells an unpaired surrogate as \ud800: sent back raw, it
    # would be a string that strict JSON readers refuse.
    text = json.dumps(value, ensure_ascii=False, default=repr).encode("utf-8", "backslashreplace").decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


# A cursor names the last path of the page before, not a position: a note added or
# deleted between two calls shifts nothing. The prefix tells a real cursor from noise.
CURSOR_PREFIX = "after:"


def page(names: list[str], cursor: str | None, limit: int) -> tuple[list[str], str | None]:
    """Up to limit of the sorted names after cursor, and the cursor for the next page
    (None on the last page)."""
    start = 0 if cursor is None else bisect.bisect_right(names, after(cursor))
    chunk = names[start : start + limit]
    more = start + limit < len(names)
    return chunk, (make_cursor(chunk[-1]) if more and chunk else None)


def make_cursor(last: str) -> str:
    return base64.urlsafe_b64encode((CURSOR_PREFIX + last).encode()).decode("ascii")


def after(cursor) -> str:
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8")
    except (AttributeError, ValueError):  # not a string, not base64, not UTF-8
        text = ""
    if not text.startswith(CURSOR_PREFIX):
        raise InvalidCursor(f"The cursor {shown(cursor)} is not one this server gave; start again without a cursor")
    return text.removeprefix(CURSOR_PREFIX)


# Notes as MCP resources: vault:///Folder/Note.md, each path segment percent-encoded
# (RFC 3986: all but letters, digits and -._~), e.g. vault:///Bread/Baker%27s%20percentages.md.
# A custom scheme rather than file://: the spec keeps file:// for things that behave
# like a filesystem, and a client may take file:///Bread/Focaccia.md for a file on its
# own disk; vault: can only mean "ask this server". (obsidian:// belongs to the
# Obsidian app's own links.) The host is always empty.
URI_PREFIX = "vault:///"


def path_to_uri(relative: str) -> str:
    return URI_PREFIX + "/".join(quote(segment, safe="") for segment in relative.split("/"))


def uri_to_path(uri) -> str:
    """The vault-relative path a note URI names. It is still untrusted: read it through
    the Vault, which judges it like any other path."""
    if not isinstance(uri, str) or uri[: len(URI_PREFIX)].lower() != URI_PREFIX:  # schemes ignore case
        raise NoteNotFound(f"{shown(uri)} is not a note of this server; note URIs look like {URI_PREFIX}Folder/Note.md")
    rest = uri[len(URI_PREFIX) :]
    if "?" in rest or "#" in rest:
        raise NoteNotFound(f"{shown(uri)} has a query or fragment; in a note name, '?' is %3F and '#' is %23")
    try:
        return unquote(rest, errors="strict")
    except UnicodeDecodeError:
        raise NoteNotFound(f"{shown(uri)} percent-encodes bytes that are not UTF-8") from None
