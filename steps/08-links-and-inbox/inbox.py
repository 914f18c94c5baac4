"""The server's one write: a new note in the inbox folder, never anything else.

create_note(vault, inbox_folder, title, content, tags) makes "Inbox/<title>.md" and
returns its vault path. The model gives a title, never a path, and nothing it sends
can make the server write elsewhere, replace a note, or smuggle in properties.

Decisions:
- The title becomes a file name valid on Windows, macOS and Linux (safe_file_name):
  Unicode in NFC; the characters no system or no Obsidian link accepts
  (\\ / : * ? " < > | # ^ [ ], control characters, lone surrogates) become spaces, and
  runs of white space one space; "%%" (an Obsidian comment) becomes "%". Every
  character that shows as nothing is removed (is_invisible: format characters such as
  the bidi controls, which can make "evil\\u202egpj.md" display as "evildm.jpg", and
  Unicode's default-ignorable ones, such as U+200D, which would make "Idea\\u200d" a
  second "Idea"); the braille blank U+2800 counts as a space. Leading dots go (no
  hidden files, no ".."), trailing dots and spaces go (Windows drops them, so two
  names would be one file). A name Windows reserves (CON, PRN, AUX, NUL, COM0-COM9,
  LPT0-LPT9, also with ¹²³, in any case, with any extension: "con.txt", "Nul") gets
  "_" after that part: "con_.txt". At most
  MAX_NAME_BYTES bytes of UTF-8 before ".md" (255 is the common limit; room is left),
  cut between characters, and never between a character and the accent or skin tone
  that belongs to it. Nothing visible left: a clear error.
- Taken names: the note is never written over. A name that differs from an existing
  one only by case or Unicode spelling counts as taken on every system, because on
  macOS and Windows it is the same file; so the model gets the same answer everywhere.
  A name that only looks like one in the inbox (a Cyrillic "а" for a Latin "a": the
  confusable skeletons of lookalikes.py are equal) is refused, naming the note it
  would pass for: a reader could not tell the two apart.
- Creating it: the text goes to a hidden temporary file in the inbox, forced to disk,
  then os.link gives it the final name. A hard link never replaces an existing file
  (os.rename would, on POSIX), and the name appears with the whole text or not at
  all: a crash leaves at worst a hidden ".create-*.tmp". Where the file system has no
  hard links, the fallback opens the final name with O_CREAT|O_EXCL ("x") and writes;
  that still never overwrites, but a crash mid-write could leave a short note.
  Two callers with the same title: exactly one link succeeds, on any system. A lock
  on the file ".create.lock" in the inbox keeps the case-insensitive check and the
  creation together, across every server process writing into this vault.
- The inbox folder (from the server's configuration) is judged like a model's path,
  created if missing, and must be a real folder inside the vault after symlinks are
  followed; a symlink leading out of the vault is refused. The returned path is
  where the note really is, as list_notes would show it.
- Properties are ours alone: `created:` (today's date) and `tags:`, written first,
  then the content as body. The content cannot close or open a properties block: a
  "---" in it is body text after our block has closed. Tags must be tags by step 5's
  rules (is_tag_name), without control characters, and are written double-quoted, so
  "true", "1e5" or "null" stay text; the written block is parsed back with step 5's
  parser and must give exactly these tags, or nothing is written.
- Content is capped at MAX_CONTENT_BYTES of UTF-8 and may not hold NUL or lone
  surrogates. The search index is not touched: the watcher of step 9 indexes the note.
"""
import datetime
import errno
import logging
import os
import re
import secrets
import sys
import threading
import time
import unicodedata
from contextlib import contextmanager
from pathlib import Path

from lookalikes import lookalike
from markdown import is_tag_name
from notes import parse_note
from vault import Vault, VaultError, path_parts, shown

log = logging.getLogger("inbox")

MAX_NAME_BYTES = 200
MAX_CONTENT_BYTES = 100 * 1024
MAX_TAGS = 20
MAX_TAG_CHARS = 100
NOTE_SUFFIX = ".md"


class InboxError(VaultError):
    """A note that cannot be created as asked; the message tells the model what to change.
    A VaultError, so a tool that already turns those into error results needs nothing new."""


class NoteExists(InboxError):
    """The title is taken: the model should choose another."""


# region safe-name
# Characters a file name or an Obsidian link cannot hold. Windows forbids \ / : * ? " < > |,
# macOS ":" and every system "/"; Obsidian links break on # ^ [ ] |.
FORBIDDEN = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f-\x9f\ud800-\udfff]')
DOUBLE_PERCENT = re.compile("%{2,}")
RESERVED = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"} | {
    f"{device}{n}" for device in ("COM", "LPT") for n in "0123456789¹²³"}


def safe_file_name(title) -> str:
    """The file name (without ".md") a title becomes, or InboxError saying why there is none."""
    if not isinstance(title, str):
        raise InboxError(f"The title must be a string; got {shown(title)}")
    name = re.sub(r"\.md\s*$", "", title, flags=re.IGNORECASE)  # "Idea.md" means the note "Idea"
    name = "".join(char for char in name if not is_invisible(char))  # before "%%" is judged
    name = DOUBLE_PERCENT.sub("%", FORBIDDEN.sub(" ", name)).replace(BRAILLE_BLANK, " ")
    name = " ".join(name.split())  # every run of white space (tabs, no-break spaces) is one space
    # NFC after the removals: an accent that followed a removed character now meets another.
    name = unicodedata.normalize("NFC", name)
    # The cut leaves a byte for the "_" a reserved name gets; reserved names are judged last,
    # on the name as it will be.
    name = not_reserved(trim_ends(cut_to_bytes(trim_ends(name), MAX_NAME_BYTES - 1)))
    if not name:
        raise InboxError(
            f"The title {shown(title)} leaves nothing for a file name once the characters that show nothing, "
            "or that file names and links cannot hold, are removed; give a title with letters or digits"
        )
    return name
# endregion safe-name


# region invisible
# Default_Ignorable_Code_Point, as Unicode's DerivedCoreProperties.txt derives it: the
# format characters (category Cf), plus Other_Default_Ignorable_Code_Point and the
# Variation_Selector characters, minus a few Cf that must stay visible (those go here too,
# since every Cf goes). unicodedata knows categories but not those two properties, so
# their ranges are written out from Unicode's PropList.txt; some are not assigned yet.
IGNORABLE_RANGES = [
    (0x034F, 0x034F),    # combining grapheme joiner
    (0x115F, 0x1160),    # Hangul choseong and jungseong fillers
    (0x17B4, 0x17B5),    # Khmer inherent vowels
    (0x180B, 0x180F),    # Mongolian variation selectors (U+180E between them is a Cf)
    (0x2065, 0x2065),    # unassigned, among the invisible operators
    (0x3164, 0x3164),    # Hangul filler
    (0xFE00, 0xFE0F),    # variation selectors: U+FE0F asks for the emoji form
    (0xFFA0, 0xFFA0),    # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),    # unassigned
    (0xE0000, 0xE0FFF),  # tag characters, variation selectors supplement, and room for more
]
# A letter to Unicode, an empty cell to the eye: it is read as a space.
BRAILLE_BLANK = "\u2800"


def is_invisible(char: str) -> bool:
    """A character that shows as nothing, or changes how others show: never part of a name."""
    code = ord(char)
    return unicodedata.category(char) == "Cf" or any(low <= code <= high for low, high in IGNORABLE_RANGES)
# endregion invisible


# region trim-and-reserve
def trim_ends(name: str) -> str:
    """No leading dots (hidden files, ".."), no trailing dots or spaces (Windows drops them)."""
    return name.lstrip(". ").rstrip(". ")


def not_reserved(name: str) -> str:
    """A name Windows keeps for a device (CON, nul.txt, Com1.md) gets "_" after its device part."""
    device, dot, rest = name.partition(".")
    if device.rstrip(" ").upper() in RESERVED:
        return device.rstrip(" ") + "_" + dot + rest
    return name
# endregion trim-and-reserve


# region cut-to-bytes
REGIONAL_INDICATORS = "".join(chr(code) for code in range(0x1F1E6, 0x1F200))  # the letters of flags


def cut_to_bytes(text: str, limit: int) -> str:
    """The longest start of text that fits in `limit` bytes of UTF-8, cut between characters,
    and never so that an accent, a skin tone or half a flag loses what it belongs to."""
    if len(text.encode("utf-8")) <= limit:
        return text
    cut = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")  # drops a half character
    while cut and belongs_to_previous(text[len(cut)]):
        cut = cut[:-1]
    # A flag is two regional indicators (🇫🇷 is F and R): an odd number at the end is half a flag.
    indicators = len(cut) - len(cut.rstrip(REGIONAL_INDICATORS))
    return cut[:-1] if indicators % 2 else cut


def belongs_to_previous(char: str) -> bool:
    """An accent or a skin tone: not a character on its own. (Joiners and variation
    selectors, which would belong here too, are gone already: they are invisible.)"""
    return unicodedata.category(char) in ("Mn", "Mc", "Me") or "\U0001f3fb" <= char <= "\U0001f3ff"
# endregion cut-to-bytes


def check_tags(tags) -> list[str]:
    """The tags as they will be written (without "#"), or InboxError naming the bad one."""
    if tags is None:
        return []
    if not isinstance(tags, list) or len(tags) > MAX_TAGS:
        raise InboxError(f"tags must be a list of at most {MAX_TAGS} strings; got {shown(tags)}")
    names = []
    for tag in tags:
        name = tag.removeprefix("#") if isinstance(tag, str) else tag
        if not valid_tag(name):
            raise InboxError(
                f"{shown(tag)} is not a tag: a tag is letters, digits, '_', '-' and '/' for nesting, "
                f"at most {MAX_TAG_CHARS} characters, no spaces or punctuation, and not only digits "
                '(e.g. "bread/sourdough")'
            )
        if name.lower() not in (seen.lower() for seen in names):  # tags ignore case
            names.append(name)
    return names


def valid_tag(name) -> bool:
    return (
        isinstance(name, str)
        and len(name) <= MAX_TAG_CHARS
        and is_tag_name(name)
        and not any(unicodedata.category(char) in ("Cc", "Cs") for char in name)
        and not any(is_invisible(char) for char in name)
    )


# region note-text
def note_text(title: str, content: str, tags: list[str], today: datetime.date) -> str:
    """Our properties block, then the content as the body. Checked by reading it back."""
    lines = ["---", f"created: {today.isoformat()}"]
    if tags:
        lines.append("tags:")
        lines += [f'  - "{tag}"' for tag in tags]  # tag characters include no '"' or '\\'
    lines += ["---", ""]
    text = "\n".join(lines) + "\n" + content
    written = parse_note(title, text)
    if written.frontmatter_error or [tag.name for tag in written.tags if tag.in_frontmatter] != tags:
        raise InboxError(f"The tags {shown(tags)} cannot be written as properties safely; leave them out")
    return text
# endregion note-text


def check_content(content) -> str:
    if not isinstance(content, str):
        raise InboxError(f"content must be a string of Markdown; got {shown(content)}")
    if "\0" in content:
        raise InboxError("The content contains a NUL character; notes are text, remove it")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate, e.g. from a JSON "\ud83d" cut in half
        raise InboxError("The content contains a broken character (a lone surrogate); send valid Unicode") from None
    if size > MAX_CONTENT_BYTES:
        raise InboxError(
            f"The content is {size} bytes; a new note may hold at most {MAX_CONTENT_BYTES} bytes. "
            "Shorten it, or split it into several notes"
        )
    return content


# region inbox-folder
def inbox_path(vault: Vault, inbox_folder: str) -> tuple[Path, str]:
    """The inbox's real folder, created if missing, and its vault-relative prefix ("Inbox/").

    The folders are made one at a time, each checked before the next is made inside it:
    if "Inbox" were a symbolic link out of the vault, "Inbox/Ideas" must not be created
    out there before the check refuses it."""
    parts = path_parts(inbox_folder)  # no "..", nothing absolute, nothing hidden
    real = vault.root
    for depth in range(1, len(parts) + 1):
        real = make_folder(vault, "/".join(parts[:depth]))
    relative = real.relative_to(vault.root).as_posix()
    return real, ("" if relative == "." else relative + "/")


def make_folder(vault: Vault, relative: str) -> Path:
    """Make vault/relative if missing (its parent is already checked); its real path,
    which must be a folder inside the vault, not hidden."""
    try:
        (vault.root / relative).mkdir(exist_ok=True)
    except FileExistsError:  # a file, or a symbolic link to something that is not a folder
        raise InboxError(f"The inbox folder {shown(relative)} exists but is not a folder") from None
    except OSError as error:
        raise InboxError(f"The inbox folder {shown(relative)} cannot be created: {error.strerror}") from None
    try:
        return vault.real_inside(relative)
    except VaultError:
        raise InboxError(
            f"The inbox folder {shown(relative)} leads outside the vault, or into a hidden folder, "
            "through a symbolic link; notes are only written inside the vault"
        ) from None
# endregion inbox-folder


# region create
def create_note(vault, inbox_folder: str, title, content, tags=None, today: datetime.date | None = None) -> str:
    """Write a new note into the inbox folder and return its vault path ("Inbox/Title.md").

    Raises InboxError (a VaultError) with a message for the model: a title that gives no
    file name, bad tags, content too large, or NoteExists when the title is taken."""
    vault = vault if isinstance(vault, Vault) else Vault(vault)
    stem = safe_file_name(title)
    text = note_text(stem, check_content(content), check_tags(tags), today or datetime.date.today())
    name = stem + NOTE_SUFFIX
    folder, prefix = inbox_path(vault, inbox_folder)
    with inbox_lock(folder):
        taken = existing_name(folder, name)
        if taken:
            raise taken_error(prefix + taken)
        twin = lookalike(name, os.listdir(folder))
        if twin:
            raise NoteExists(f"The title {shown(stem)} looks just like the note {shown(prefix + twin)}, which exists: "
                             "their names differ only in characters that look alike. Choose a title that reads "
                             "differently")
        write_new_file(folder, name, text.encode("utf-8"), prefix)
    # The one write the server makes leaves a trace: the path, never the text.
    log.info("created the note %s", shown(prefix + name))
    return prefix + name
# endregion create


# region taken
def existing_name(folder: Path, name: str) -> str | None:
    """The name of an entry in folder that is `name` ignoring case and Unicode spelling."""
    wanted = comparable(name)
    return next((entry for entry in os.listdir(folder) if comparable(entry) == wanted), None)


def comparable(name: str) -> str:
    # casefold, not lower: stricter ("Straße" = "STRASSE"), and a stricter test only asks
    # for another title where a case-insensitive file system might not have needed one.
    return unicodedata.normalize("NFC", name.casefold())
# endregion taken


def taken_error(path: str) -> NoteExists:
    return NoteExists(f"A note {shown(path)} already exists; notes are never overwritten. Choose another title")


# region lock
LOCK_NAME = ".create.lock"  # hidden: never a note, never indexed, not shown by Obsidian
LOCK_WAIT_SECONDS = 10
_creating = threading.Lock()  # the threads of this process, one at a time


@contextmanager
def inbox_lock(folder: Path):
    """Hold the inbox's lock while a name is checked and created.

    A lock in memory is not enough: every client that starts its own server over stdio
    starts another process on the same vault. A lock the operating system keeps on a file
    holds across processes, and the system releases it when its process ends, even in a
    crash. A lock file made with O_EXCL would be left behind by a crash and need a rule
    for when it is stale; this one can stay in the inbox, empty, and mean nothing."""
    with _creating:
        try:  # never through a symbolic link: the lock file may not point out of the vault
            fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as error:
            raise InboxError(f"The inbox's lock file cannot be opened: {error.strerror}") from None
        try:
            wait_for_lock(fd)
            try:
                yield
            finally:
                unlock_file(fd)
        finally:
            os.close(fd)


def wait_for_lock(fd: int) -> None:
    """Take the lock, waiting while another process holds it, but not forever."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            return lock_file(fd)
        except (BlockingIOError, PermissionError):  # another process holds it (flock, msvcrt)
            if time.monotonic() > deadline:
                raise InboxError(
                    f"Another process has been creating a note in this inbox for {LOCK_WAIT_SECONDS} s; try again"
                ) from None
            time.sleep(0.01)
        except OSError as error:  # a file system that cannot lock, say
            raise InboxError(f"The inbox cannot be locked to create a note: {error.strerror}") from None
# endregion lock


# fcntl.flock where it exists (Linux, macOS); Windows has msvcrt.locking instead, which
# locks bytes of the file: the first byte, which may lie past the end of an empty file.
if sys.platform == "win32":
    import msvcrt

    def lock_file(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def unlock_file(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def lock_file(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def unlock_file(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


# region write-new-file
def write_new_file(folder: Path, name: str, data: bytes, prefix: str) -> None:
    """Give `folder/name` the bytes `data`, all at once, only if nothing has that name."""
    temporary = folder / f".create-{secrets.token_hex(8)}.tmp"  # hidden: no note, never indexed
    try:
        write_and_sync(temporary, data)
        try:
            os.link(temporary, folder / name)  # fails if the name exists; never replaces
        except FileExistsError:
            raise taken_error(prefix + name) from None
        except OSError as error:
            if error.errno not in NO_HARD_LINKS:
                raise
            write_and_sync(folder / name, data)  # "x": O_CREAT|O_EXCL, never an existing file
        sync_folder(folder)
    except FileExistsError:  # only the fallback's "x" gets here
        raise taken_error(prefix + name) from None
    except OSError as error:  # a full disk, no permission: words for the model, not a traceback
        raise InboxError(f"{shown(prefix + name)} cannot be written: {error.strerror}") from None
    finally:
        temporary.unlink(missing_ok=True)
# endregion write-new-file


# What link() says on file systems without hard links (FAT, exFAT, some network shares).
NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.ENOSYS}


# region durable
def write_and_sync(path: Path, data: bytes) -> None:
    """Write a file that must not exist yet ("x"), and force it to disk."""
    with open(path, "xb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def sync_folder(folder: Path) -> None:
    """Make the new name itself survive a power cut. Windows cannot open a folder for this."""
    if sys.platform == "win32":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
# endregion durable
