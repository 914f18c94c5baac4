"""list_notes as questions about time and properties: "what did I write this week?",
"which notes are still drafts?".

list_notes(vault, arguments) lists the notes of a folder (or the vault), keeps those
changed between modifiedAfter and modifiedBefore and those whose properties match
`where`, sorts them by path, by modification (newest first) or by creation (newest
first), and answers one page, each entry with its title and its modification time.

Decisions:
- Times on the wire are ISO 8601 in UTC, to the second ("2026-04-05T09:30:00Z"):
  one spelling that compares as text and means the same wherever the client is.
  A time sent without a zone, or a date alone, is the server's local time, as a
  person asking about "since Monday" means it.
- modifiedAfter keeps what changed at or after it, modifiedBefore what changed before
  it, so two calls that share a boundary never both list a note.
- "created" is the file's birth time where Python can see one (macOS, BSD; Windows from
  Python 3.12), else the note's `created` property (create_note writes one), else the
  modification time: the best answer each system can give, never a missing one.
- `where` compares property values as JSON does, except that text ignores case, as
  Obsidian's search does; a list property matches when one of its items does. Property
  names ignore case too: Obsidian shows "Status" and "status" as one property.
- A cursor names the last entry of the page before, as vault.page does: for the time
  sorts, its time and its path, so a note added between two calls shifts nothing. A
  cursor of one sort is refused by another.
- Only `where` and sort by "created" read the notes, and each note once while its
  stat stays the same (PROPERTIES); a time costs one stat per note, and a plain
  listing by path one stat for each note of the page it answers.
"""
import bisect
import datetime
import os
from dataclasses import dataclass
from pathlib import Path

from frontmatter import read_frontmatter
from resources import title_of
from vault import InvalidCursor, Vault, VaultError, after, make_cursor, page, shown

SORTS = ("path", "modified", "created")
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
MICROSECOND = datetime.timedelta(microseconds=1)


@dataclass
class Entry:
    path: str
    modified: int  # nanoseconds since the epoch, as stat gives them
    created: int | None = None  # only when sorted by creation


# region list-notes-query
def list_notes(vault: Vault, arguments: dict) -> dict:
    """One page of the notes that fit the arguments, in the order asked for."""
    since, until = moment(arguments, "modifiedAfter"), moment(arguments, "modifiedBefore")
    where, sort = conditions(arguments.get("where")), arguments["sort"]
    paths, cursor, limit = vault.list_notes(arguments.get("folder")), arguments.get("cursor"), arguments["limit"]
    plain = sort == "path" and since is None and until is None and not where
    if plain:  # the page is known from the paths alone: only its notes need a stat
        paths, next_cursor = page(paths, path_cursor(cursor), limit)
    entries = []
    for path in paths:
        try:
            info = os.stat(vault.root / path)
        except OSError:  # deleted since the listing
            continue
        if (since is not None and info.st_mtime_ns < since) or (until is not None and info.st_mtime_ns >= until):
            continue
        properties = read_properties(vault, path, info) if where or sort == "created" else {}
        if where and not matches(properties, where):
            continue
        created = created_time(info, properties) if sort == "created" else None
        entries.append(Entry(path, info.st_mtime_ns, created))
    if not plain:
        entries, next_cursor = page_of(entries, sort, cursor, limit)
    result = {"notes": [entry.path for entry in entries], "entries": [entry_data(entry) for entry in entries]}
    if next_cursor:
        result["nextCursor"] = next_cursor
    return result
# endregion list-notes-query


def entry_data(entry: Entry) -> dict:
    data = {"path": entry.path, "title": title_of(entry.path), "modified": iso(entry.modified)}
    if entry.created is not None:
        data["created"] = iso(entry.created)
    return data


# region paging-by-time
def order_key(sort: str):
    """The order of a sort: by path, or newest first with the path breaking ties."""
    if sort == "path":
        return lambda entry: ("", entry.path)
    return lambda entry: (-getattr(entry, sort), entry.path)


def path_cursor(cursor):
    """A cursor for the sort by path, refused when another sort gave it."""
    if cursor is not None and after(cursor).startswith(tuple(f"{name}:" for name in SORTS[1:])):
        raise InvalidCursor(f"The cursor {shown(cursor)} was given for another sort; start again without it")
    return cursor


def page_of(entries: list[Entry], sort: str, cursor, limit: int) -> tuple[list[Entry], str | None]:
    if sort == "path":  # vault.page, and its cursors, as before this module existed
        by_path = {entry.path: entry for entry in entries}  # listed sorted, as page wants them
        names, next_cursor = page(list(by_path), path_cursor(cursor), limit)
        return [by_path[name] for name in names], next_cursor
    key = order_key(sort)
    entries.sort(key=key)
    start = 0 if cursor is None else bisect.bisect_right(entries, time_cursor(sort, cursor), key=key)
    chunk = entries[start : start + limit]
    if start + limit >= len(entries) or not chunk:
        return chunk, None
    last = chunk[-1]
    return chunk, make_cursor(f"{sort}:{getattr(last, sort)}:{last.path}")


def time_cursor(sort: str, cursor) -> tuple[int, str]:
    """The (key, path) a cursor of this sort names, as order_key spells it."""
    name, _, rest = after(cursor).partition(":")
    time, _, path = rest.partition(":")
    if name != sort or not time.lstrip("-").isdigit():
        raise InvalidCursor(f"The cursor {shown(cursor)} was not given for sort {shown(sort)}; "
                            "start again without a cursor")
    return (-int(time), path)
# endregion paging-by-time


# region moments
def moment(arguments: dict, name: str) -> int | None:
    """An ISO 8601 date or time from the arguments, in nanoseconds since the epoch."""
    text = arguments.get(name)
    if text is None:
        return None
    try:
        value = datetime.datetime.fromisoformat(text)
        if value.tzinfo is None:  # a date alone, or a time without a zone: local, as people mean it
            value = value.astimezone()  # fails for the first day of year 1 east of Greenwich
    except (ValueError, OverflowError, OSError):
        raise VaultError(f"{name}: {shown(text)} is not an ISO 8601 date or time; write it like "
                         '"2026-04-05", "2026-04-05T14:30" (the server\'s local time) or '
                         '"2026-04-05T12:30:00Z"') from None
    return (value - EPOCH) // MICROSECOND * 1000


def iso(nanoseconds: int) -> str:
    when = EPOCH + datetime.timedelta(microseconds=nanoseconds // 1000)
    return when.isoformat(timespec="seconds").replace("+00:00", "Z")
# endregion moments


def created_time(info: os.stat_result, properties: dict) -> int:
    """The birth time where the file system keeps one, else the `created` property, else mtime."""
    born = getattr(info, "st_birthtime_ns", None) or getattr(info, "st_birthtime", None)
    if born:
        return born if isinstance(born, int) else int(born * 10**9)
    written = properties.get("created")
    if isinstance(written, str):
        try:
            return moment({"created": written}, "created")
        except VaultError:
            pass  # not a date: the file's own time will do
    return info.st_mtime_ns


# What read_properties found, by note, with the stat it was found under: a second page
# of the same question, or the next question, reads again only the notes that changed.
PROPERTIES: dict[tuple[Path, str], tuple[tuple, dict]] = {}
MAX_REMEMBERED = 100_000


def read_properties(vault: Vault, path: str, info: os.stat_result) -> dict:
    """A note's properties; {} for a note that cannot be read or has none."""
    key, stamp = (vault.root, path), (info.st_mtime_ns, info.st_size, info.st_ino)
    remembered = PROPERTIES.get(key)
    if remembered and remembered[0] == stamp:
        return remembered[1]
    try:
        _, text = vault.read_note(path)
        properties = read_frontmatter(text.replace("\r\n", "\n").replace("\r", "\n")).data
    except VaultError:  # too large, not text, gone: it has no properties to match
        properties = {}
    if len(PROPERTIES) >= MAX_REMEMBERED:
        PROPERTIES.clear()
    PROPERTIES[key] = (stamp, properties)
    return properties


# region where
def conditions(where) -> dict | None:
    """`where` checked: each property wants a value (text, number, true/false, null) or
    {"exists": true|false}."""
    if not where:
        return None
    for name, wanted in where.items():
        if isinstance(wanted, dict):
            if list(wanted) != ["exists"] or not isinstance(wanted["exists"], bool):
                raise VaultError(f"where.{name}: {shown(wanted)} is not a condition; give a value to match, "
                                 'e.g. {"status": "draft"}, or {"exists": true} or {"exists": false}')
        elif isinstance(wanted, list):
            raise VaultError(f"where.{name}: give one value, not a list; a list property matches when one "
                             'of its items equals it, e.g. {"tags": "draft"}')
    return where


def matches(properties: dict, where: dict) -> bool:
    folded = {str(name).casefold(): value for name, value in properties.items()}
    for name, wanted in where.items():
        present = name.casefold() in folded
        if isinstance(wanted, dict):
            if present != wanted["exists"]:
                return False
            continue
        value = folded.get(name.casefold())
        values = value if isinstance(value, list) else [value]
        if not present or not any(same(item, wanted) for item in values):
            return False
    return True


def same(value, wanted) -> bool:
    if isinstance(value, str) and isinstance(wanted, str):
        return value.casefold() == wanted.casefold()
    if isinstance(value, bool) or isinstance(wanted, bool) or value is None or wanted is None:
        return value is wanted  # true is not 1, in JSON
    return isinstance(value, (int, float)) and isinstance(wanted, (int, float)) and value == wanted
# endregion where
