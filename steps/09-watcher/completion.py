"""Completion of a note's path, for the vault:///{+path} resource template.

A user who picks a note to show the model types part of its name in the client's
box; the client sends what is typed in completion/complete, and shows the paths this
module offers, best first: the paths that start with what is typed ("Bread/Fo"),
then the notes whose name does ("foc"), then those whose path holds its letters in
order ("brfoc"), the closest first.

Decisions:
- Case and Unicode spelling are ignored, as Obsidian's quick switcher ignores them.
- The notes offered are those vault.list_notes gives, as list_notes and resources/list
  show them: whatever the vault keeps out of its listing is never offered.
- At most MAX_VALUES paths, as the specification allows; `total` says how many
  matched and `hasMore` whether some were left out.
"""
import unicodedata

from resources import title_of
from vault import Vault

MAX_VALUES = 100


# region complete-path
def complete_path(vault: Vault, typed: str) -> dict:
    """The completion result for the path argument of the note template."""
    wanted = folded(typed.lstrip("/"))
    by_path, by_name, by_letters = [], [], []
    for path in vault.list_notes():
        name = folded(path)
        if name.startswith(wanted):
            by_path.append(path)
        elif folded(title_of(path)).startswith(wanted):
            by_name.append(path)
        else:
            span = letters_span(wanted, name)
            if span is not None:
                by_letters.append((span, path))
    found = by_path + by_name + [path for _, path in sorted(by_letters)]
    return {"completion": {"values": found[:MAX_VALUES], "total": len(found), "hasMore": len(found) > MAX_VALUES}}
# endregion complete-path


def folded(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def letters_span(wanted: str, name: str) -> int | None:
    """How many characters of name it takes to find wanted's letters in order, from the
    first place where that is shortest; None when they are not all there."""
    best = None
    start = name.find(wanted[:1])
    while start != -1:
        at = start
        for char in wanted[1:]:
            at = name.find(char, at + 1)
            if at == -1:
                return best  # a later start cannot find them either
        span = at - start + 1
        best = span if best is None else min(best, span)
        start = name.find(wanted[:1], start + 1)
    return best
