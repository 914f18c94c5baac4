"""The daily note: "add this to today's note", named as Obsidian names it.

daily_note(vault, arguments) finds the note of a day (today in the server's local time
unless `date` says otherwise) where Obsidian's Daily notes core plugin puts it, reads
it, and with `append` adds text at its end, first creating it from its template if
it is missing.

Decisions:
- The settings: the Periodic Notes plugin's (.obsidian/plugins/periodic-notes/data.json)
  when its daily notes are enabled, since it then makes the daily notes; else the core
  plugin's (.obsidian/daily-notes.json); else Obsidian's defaults: the vault's root,
  "YYYY-MM-DD", no template. An empty format or folder means the default too.
- A settings file that is not JSON, or whose values are not text, is refused in words:
  guessing a name could write the day's text into a note nobody will look for.
- The format is moment.js's, in its default English locale: the tokens of
  moment_format, "[text]" for literal text, every other character as it is. A "/" in
  it makes folders, as in Obsidian ("YYYY/MM/YYYY-MM-DD").
- The template is read through the vault, so the vault's rules hold for it; {{date}},
  {{time}}, {{title}}, {{yesterday}}, {{tomorrow}}, {{date:FORMAT}} and {{time:FORMAT}}
  are filled in as Obsidian fills them. A template that is missing is refused: the user
  asked for their template, not for an empty note.
- Writing (write_daily_note): a missing note is created with inbox.py's
  write_new_file, whole or not at all, never over a note; an existing one gets the
  text appended (O_APPEND), so what is there is never rewritten and an edit Obsidian
  saves meanwhile is not lost. The day's folder takes the same lock create_note takes
  in its folder, across processes, so two appends never interleave.
- The note's path is judged like a model's: no "..", nothing hidden.
"""
import datetime
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import inbox
from vault import NoteNotFound, Vault, VaultError, path_parts, path_to_uri, shown

CORE_SETTINGS = ".obsidian/daily-notes.json"
PERIODIC_SETTINGS = ".obsidian/plugins/periodic-notes/data.json"
MAX_SETTINGS_BYTES = 64 * 1024
DEFAULT_FORMAT = "YYYY-MM-DD"
FIRST_DAY, LAST_DAY = datetime.date(1900, 1, 1), datetime.date(9998, 12, 31)


@dataclass
class Settings:
    folder: str = ""
    format: str = DEFAULT_FORMAT
    template: str = ""


# region daily-note
def daily_note(vault: Vault, arguments: dict, may_write=None) -> tuple[dict, bytes | None]:
    """The daily note of a day: read, or appended to (and created first when missing).
    Before a write, may_write(path) may refuse it (the server's write policy). Returns
    the answer and, after an append, the note's bytes before it (None if it was made)."""
    settings = read_settings(vault.root)
    day = the_day(arguments.get("date"))
    path = note_path(settings, day)
    created, before = False, None
    if arguments.get("append") is not None:
        if may_write is not None:
            may_write(path)
        before = write_daily_note(vault, path, settings, day, inbox.check_content(arguments["append"]))
        created = before is None
    result = {"date": day.isoformat(), "path": path, "uri": path_to_uri(path)}
    try:
        _, text = vault.read_note(path)
    except NoteNotFound:
        return result | {"exists": False}, before
    return result | {"exists": True, "created": created, "text": text}, before
# endregion daily-note


def the_day(text) -> datetime.date:
    if text is None:
        return datetime.date.today()  # the server's local time zone, where the user is
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        raise VaultError(f"date: {shown(text)} is not an ISO 8601 date; write it like \"2026-04-05\", "
                         "or leave it out for today") from None
    if not FIRST_DAY <= day <= LAST_DAY:  # {{yesterday}} and {{tomorrow}} must be dates too
        raise VaultError(f"date: {shown(text)} is outside the days a daily note may have, "
                         f"{FIRST_DAY.isoformat()} to {LAST_DAY.isoformat()}")
    return day


# region settings
def read_settings(root: Path) -> Settings:
    """Periodic Notes' daily settings when enabled, else the core plugin's, else the defaults."""
    periodic = read_json(root, PERIODIC_SETTINGS)
    daily = periodic.get("daily") if isinstance(periodic, dict) else None
    if isinstance(daily, dict) and daily.get("enabled") is True:
        return settings_from(daily, PERIODIC_SETTINGS)
    core = read_json(root, CORE_SETTINGS)
    return Settings() if core is None else settings_from(core, CORE_SETTINGS)


def read_json(root: Path, name: str):
    """The JSON in a settings file; None when there is none."""
    try:
        with open(root / name, "rb") as file:
            data = file.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise VaultError(f"{name} cannot be read ({error.strerror}); the daily note's name comes from it") from None
    try:
        if len(data) > MAX_SETTINGS_BYTES:
            raise ValueError("too large")
        return json.loads(data.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON, too large
        raise VaultError(f"{name} is not JSON, so the daily note's name is unknown: open Obsidian's "
                         "settings for daily notes and save them again, or delete the file") from None


def settings_from(data, name: str) -> Settings:
    if not isinstance(data, dict):
        raise VaultError(f"{name} holds no settings object; save the daily notes settings again in Obsidian")
    values = {}
    for key in ("folder", "format", "template"):
        value = data.get(key) or ""  # missing, null or empty: Obsidian's default
        if not isinstance(value, str):
            raise VaultError(f"{name}: {key} is {shown(value)}, not text; set it again in Obsidian")
        values[key] = value.strip()
    return Settings(values["folder"].strip("/"), values["format"] or DEFAULT_FORMAT, values["template"])
# endregion settings


def note_path(settings: Settings, day: datetime.date) -> str:
    """Where the daily note of `day` is: folder, then the date in the note format, then .md."""
    name = moment_format(datetime.datetime.combine(day, datetime.time()), settings.format)
    path = "/".join(part for part in (settings.folder, name) if part) + ".md"
    return "/".join(path_parts(path))  # judged like a model's path: no "..", nothing hidden


# region write-daily-note
def write_daily_note(vault: Vault, path: str, settings: Settings, day: datetime.date, addition: str) -> bytes | None:
    """Append `addition` to the daily note at path, creating it from its template first
    if it is missing. Returns the note's bytes before, for the journal: None if it was
    created. The one way this module writes."""
    *folders, name = path.split("/")
    folder = make_folders(vault, folders)
    prefix = "".join(part + "/" for part in folders)
    with inbox.inbox_lock(folder):  # one writer at a time, in every server process
        try:
            _, before = vault.read_bytes(path)
        except NoteNotFound:
            text = from_template(vault, settings, day, name.removesuffix(".md"))
            inbox.write_new_file(folder, name, joined(text, addition).encode("utf-8"), prefix)
            return None
        _, text = vault.read_note(path)
        _, real = vault.locate(path)
        append_bytes(real, joined(text, addition)[len(text):].encode("utf-8"))
        return before


def joined(text: str, addition: str) -> str:
    """The note with the addition on lines of its own, ending with a line end."""
    if text and not text.endswith("\n"):
        text += "\n"
    return text + addition + ("" if addition.endswith("\n") else "\n")


def append_bytes(real: Path, data: bytes) -> None:
    """Add data at the end of the file: what is there is never rewritten."""
    with open(real, "rb") as file:
        if file.read(2) in (b"\xff\xfe", b"\xfe\xff"):
            raise VaultError(f"{shown(real.name)} is UTF-16 text; appending UTF-8 to it would break it")
    try:
        descriptor = os.open(real, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
        try:
            os.write(descriptor, data)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except OSError as error:
        raise VaultError(f"{shown(real.name)} cannot be appended to: {error.strerror}") from None
# endregion write-daily-note


def make_folders(vault: Vault, folders: list[str]) -> Path:
    """The daily note's folder, made one level at a time, each checked before the next."""
    real = vault.root
    for depth in range(1, len(folders) + 1):
        relative = "/".join(folders[:depth])
        try:
            (vault.root / relative).mkdir(exist_ok=True)
        except OSError as error:
            raise VaultError(f"The folder {shown(relative)} for daily notes cannot be made: {error.strerror}") from None
        real = vault.real_inside(relative)  # a symbolic link out of the vault is refused
        if not real.is_dir():
            raise VaultError(f"{shown(relative)} is not a folder of the vault the daily note can be written in")
    return real


PLACEHOLDER = re.compile(r"\{\{\s*(date|time|title|yesterday|tomorrow)\s*(?::([^}]*))?\}\}", re.IGNORECASE)


def from_template(vault: Vault, settings: Settings, day: datetime.date, title: str) -> str:
    """The template's text with its placeholders filled in; "" without a template."""
    if not settings.template:
        return ""
    try:
        _, text = vault.read_note(settings.template)
    except NoteNotFound:
        raise VaultError(f"The daily notes template {shown(settings.template)} is not a note of the vault; "
                         "nothing was written. Fix the template setting in Obsidian, or create that note") from None
    now = datetime.datetime.combine(day, datetime.datetime.now().time())

    def filled(match: re.Match) -> str:
        name, format = match.group(1).lower(), match.group(2)
        if name == "title":
            return title
        if name in ("yesterday", "tomorrow"):
            return moment_format(now + datetime.timedelta(days=-1 if name == "yesterday" else 1), settings.format)
        if format is not None:
            return moment_format(now, format.strip())
        return moment_format(now, settings.format if name == "date" else "HH:mm")

    return PLACEHOLDER.sub(filled, text)


TOKENS = re.compile(r"\[[^\]]*\]|YYYY|YY|Q|MMMM|MMM|MM|M|DDDD|DDD|Do|DD|D|dddd|ddd|dd|d|E|e|GGGG|GG|gggg|gg"
                    r"|WW|W|ww|w|HH|H|hh|h|mm|m|ss|s|A|a|X|x")
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]


def moment_format(when: datetime.datetime, format: str) -> str:
    """`when` written in a moment.js format, in moment's default English locale."""
    return TOKENS.sub(lambda match: token(when, match.group()), format)


def token(when: datetime.datetime, name: str) -> str:
    if name.startswith("["):
        return name[1:-1]  # [text] is literal text
    sunday_first = (when.weekday() + 1) % 7  # moment's d: Sunday is 0
    iso_year, iso_week, iso_day = when.isocalendar()
    week_year, week = locale_week(when.date())
    hour12 = when.hour % 12 or 12
    values = {
        "YYYY": f"{when.year:04d}", "YY": f"{when.year % 100:02d}", "Q": str((when.month - 1) // 3 + 1),
        "MMMM": MONTHS[when.month - 1], "MMM": MONTHS[when.month - 1][:3],
        "MM": f"{when.month:02d}", "M": str(when.month),
        "DDDD": f"{when.timetuple().tm_yday:03d}", "DDD": str(when.timetuple().tm_yday),
        "Do": ordinal(when.day), "DD": f"{when.day:02d}", "D": str(when.day),
        "dddd": DAYS[sunday_first], "ddd": DAYS[sunday_first][:3], "dd": DAYS[sunday_first][:2],
        "d": str(sunday_first), "e": str(sunday_first), "E": str(iso_day),
        "GGGG": f"{iso_year:04d}", "GG": f"{iso_year % 100:02d}", "WW": f"{iso_week:02d}", "W": str(iso_week),
        "gggg": f"{week_year:04d}", "gg": f"{week_year % 100:02d}", "ww": f"{week:02d}", "w": str(week),
        "HH": f"{when.hour:02d}", "H": str(when.hour), "hh": f"{hour12:02d}", "h": str(hour12),
        "mm": f"{when.minute:02d}", "m": str(when.minute), "ss": f"{when.second:02d}", "s": str(when.second),
        "A": "AM" if when.hour < 12 else "PM", "a": "am" if when.hour < 12 else "pm",
        "X": str(int(when.timestamp())), "x": str(int(when.timestamp() * 1000)),
    }
    return values[name]


def locale_week(day: datetime.date) -> tuple[int, int]:
    """moment's English week (w, gggg): weeks start on Sunday, and week 1 holds 1 January."""
    saturday = day + datetime.timedelta(days=6 - (day.weekday() + 1) % 7)
    return saturday.year, (saturday.timetuple().tm_yday - 1) // 7 + 1


def ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"
