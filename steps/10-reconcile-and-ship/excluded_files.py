"""Obsidian's excluded files: Settings -> Files and links -> Excluded files.

Obsidian keeps them in <vault>/.obsidian/app.json, as "userIgnoreFilters": a list of
strings. A string written between slashes, "/\\.excalidraw\\.md$/", is a regular
expression, searched for anywhere in a note's vault path; any other string is the start
of a path: "Archive/" (what the folder picker writes) is that folder, "Daily" every
path that begins with those letters. Obsidian hides such notes from search, the graph
and unlinked mentions, yet opens them and resolves links to them. So does this server:
they are left out of list_notes, resources/list, search and related notes, while
get_note, links and backlinks still see them.

Decisions:
- The file is read once, when the server starts: a change made in Obsidian meanwhile
  takes a restart, which the log line at startup reminds of.
- No file, no exclusions. A file that is not JSON, not an object, or whose filters are
  not a list of strings excludes nothing and says why in one log line; a filter that is
  not a string, or a regular expression Python cannot compile, is skipped the same way.
  The server never stops over Obsidian's settings.
- Obsidian's regular expressions are JavaScript's; the common forms mean the same in
  Python's re. A repeated group that itself repeats ("(a+)+", "(.*x)*") can take time
  exponential in a path's length, and a match in re cannot be interrupted, so such a
  pattern is skipped, and logged, rather than risk a server that hangs on one path.
"""
import json
import logging
import re
import unicodedata
from pathlib import Path

SETTINGS = Path(".obsidian") / "app.json"

log = logging.getLogger("vault")


class ExcludedFiles:
    """Tells whether a vault path matches one of Obsidian's excluded-file filters."""

    def __init__(self, prefixes=(), patterns=()):
        self.prefixes = tuple(prefixes)
        self.patterns = tuple(patterns)

    # region excluded
    def __call__(self, path: str) -> bool:
        path = unicodedata.normalize("NFC", path)  # as typed in the settings; the disk may say NFD
        return path.startswith(self.prefixes) or any(pattern.search(path) for pattern in self.patterns)
    # endregion excluded

    def __len__(self) -> int:
        return len(self.prefixes) + len(self.patterns)

    # region read
    @classmethod
    def read(cls, vault_root: Path) -> "ExcludedFiles":
        """The filters of the vault's app.json; none when there is none, or it is unusable."""
        try:
            settings = json.loads((vault_root / SETTINGS).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as error:  # ValueError: not UTF-8, not JSON
            log.warning("excluded files: %s cannot be read (%s); no note is excluded", SETTINGS, error)
            return cls()
        filters = settings.get("userIgnoreFilters", []) if isinstance(settings, dict) else None
        if not isinstance(filters, list):
            log.warning("excluded files: userIgnoreFilters in %s is not a list; no note is excluded", SETTINGS)
            return cls()
        prefixes, patterns = [], []
        for text in filters:
            if not isinstance(text, str) or not text:
                log.warning("excluded files: skipping %r, which is not a path or a /pattern/", text)
            elif len(text) > 2 and text.startswith("/") and text.endswith("/"):
                pattern = compiled(text[1:-1])
                if pattern is not None:
                    patterns.append(pattern)
            else:
                prefixes.append(unicodedata.normalize("NFC", text))
        return cls(prefixes, patterns)
    # endregion read


# region repeats
def compiled(source: str) -> re.Pattern | None:
    """The pattern, or None (and a log line) when it cannot or should not be used."""
    if repeats_a_repeat(source):
        log.warning("excluded files: skipping /%s/: a repeated group that repeats inside "
                    "can take very long to match", source)
        return None
    try:
        return re.compile(source)
    except re.error as error:
        log.warning("excluded files: skipping /%s/, which is no regular expression Python reads (%s)", source, error)
        return None


def repeats_a_repeat(source: str) -> bool:
    """True if a group with a quantifier inside (+, * or {}) is itself quantified."""
    text = re.sub(r"\\.", "x", source)  # an escaped character is a plain one
    text = re.sub(r"\[[^\]]*\]", "x", text)  # and so is a character class
    opened = []
    for at, char in enumerate(text):
        if char == "(":
            opened.append(at)
        elif char == ")" and opened:
            start = opened.pop()
            if text[at + 1 : at + 2] in ("*", "+", "{") and re.search(r"[*+{]", text[start + 1 : at]):
                return True
    return False
# endregion repeats
