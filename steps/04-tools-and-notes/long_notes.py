"""A long note read in parts, so that no answer is larger than a client keeps.

A note may be a megabyte; a client cuts a tool's answer long before that (Claude Code
keeps about 25,000 tokens), and what it cuts the model never sees, nor knows it missed.
So get_note answers at most maxChars characters of the text, from `offset`, and when
more follows it says so: `truncated: true`, `nextOffset` where the next part starts,
`totalChars`. From step 5 on, the outline comes with every part, so the model may read
on, or ask for one section by its heading instead.

Decisions:
- Characters are Unicode code points, as Python counts them: an emoji outside the
  Basic Multilingual Plane is one character, never two halves of a surrogate pair.
- The parts add up to the text exactly: each starts where the one before ended.
- A part ends after a line end when one lies in its last quarter, so parts end where
  a reader would pause; else never between a carriage return and its line feed, nor
  before an accent or a joiner that belongs to the character before it.
- An offset past the end is refused; an offset at the end answers "" (a last empty part).
"""
import unicodedata

from vault import VaultError

DEFAULT_MAX_CHARS = 40_000  # about 10,000 tokens: kept whole by every client we know of
JOINERS = "\u200c\u200d\ufe0e\ufe0f"  # zero-width (non-)joiner, variation selectors


# region read-in-parts
def read_in_parts(result: dict, max_chars: int, offset: int) -> None:
    """Cut result["text"] to the part from offset, and say where the next part starts."""
    text = result["text"]
    if offset > len(text):
        raise VaultError(f"offset {offset} is past the end of {result['path']}'s text, which has "
                         f"{len(text)} characters; start at 0, or at a nextOffset this tool gave")
    end = offset + max_chars
    if end < len(text):
        end = cut_point(text, offset, end)
        result["truncated"], result["nextOffset"] = True, end
    if offset or end < len(text):
        result["totalChars"] = len(text)
    result["text"] = text[offset:end]
# endregion read-in-parts


# region cut-point
def cut_point(text: str, start: int, end: int) -> int:
    """Where a part from start, at most end, ends: after a line end in its last quarter if
    there is one; else at end, moved back out of a CR LF pair or off an accent or joiner."""
    line_end = text.rfind("\n", start + (end - start) * 3 // 4, end)
    if line_end != -1:
        return line_end + 1
    while end - 1 > start and belongs_to_previous(text, end):
        end -= 1
    return end


def belongs_to_previous(text: str, at: int) -> bool:
    """True when text[at] may not begin a part: it would leave half of something behind."""
    char, before = text[at], text[at - 1]
    return ((before == "\r" and char == "\n") or before == "\u200d" or char in JOINERS
            or unicodedata.category(char).startswith("M"))
# endregion cut-point
