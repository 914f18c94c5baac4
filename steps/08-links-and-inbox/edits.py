"""The four edits of edit_note, as changes of a note's text: each finds the part it
names the way get_note reads it, and touches nothing else.

edit_text(text, operation, content, heading, find) returns the new text, or raises
EditError saying what to change. The part an edit works on:
- no heading: the note, its start being the first line after the properties;
- a heading, as get_note takes it ("Shaping", "Day 2#Timing"): the lines under the
  heading line, subsections included, up to the last line that is not blank, so the
  blank lines before the next heading stay where they are;
- "^id": the block that id names, its text before the " ^id", which stays on the
  block's last line.
append adds the content after the part, prepend before it, each on lines of its own;
replace_section replaces the part. find_replace replaces one exact occurrence of
`find` anywhere in the text, and refuses when there are none or several.
"""
from dataclasses import dataclass

from markdown import section_lines
from notes import parse_note
from vault import VaultError, shown

OPERATIONS = ("append", "prepend", "replace_section", "find_replace")


class EditError(VaultError):
    """An edit that cannot be made as asked; nothing was written."""


@dataclass
class Part:
    start: int  # offsets in the text: the part is text[start:end]
    end: int
    block: bool = False  # a block's text ends inside its last line, before its id


# region edit-text
def edit_text(text: str, operation: str, content: str, heading: str | None = None, find: str | None = None) -> str:
    content = checked(content).replace("\r\n", "\n")
    if operation == "find_replace":
        return find_replace(text, find, content)
    part = find_part(text, heading)
    if operation == "replace_section":
        new = content.rstrip("\n") if part.block else as_lines(content)
        return text[: part.start] + on_own_line(text, part.start, new) + text[part.end :]
    if operation == "prepend":
        return text[: part.start] + on_own_line(text, part.start, as_lines(content)) + text[part.start :]
    if part.block:  # append inside the block, before its id: "\n" joins it to the block's last line
        return text[: part.end] + "\n" + content.rstrip("\n") + text[part.end :]
    return text[: part.end] + on_own_line(text, part.end, as_lines(content)) + text[part.end :]
# endregion edit-text


def checked(content: str) -> str:
    if "\0" in content:
        raise EditError("The content contains a NUL character; notes are text, remove it")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, e.g. from a JSON "\ud83d" cut in half
        raise EditError("The content contains a broken character (a lone surrogate); send valid Unicode") from None
    return content


def as_lines(content: str) -> str:
    """Content as whole lines: ending with a line break, unless it is empty."""
    return content if content == "" or content.endswith("\n") else content + "\n"


def on_own_line(text: str, offset: int, new: str) -> str:
    """new, preceded by a line break when text[offset] is not at the start of a line
    (a note or heading that ends without one)."""
    return "\n" + new if new and offset > 0 and text[offset - 1] != "\n" else new


# region find-replace
def find_replace(text: str, find: str | None, content: str) -> str:
    if not find:
        raise EditError('find_replace needs `find`, the exact text to replace, as get_note shows it')
    find = find.replace("\r\n", "\n")
    count = text.count(find)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        raise EditError(f"{shown(find)} {where} in the note; find_replace replaces exactly one occurrence. "
                        "Give a longer `find` that occurs once, copied from get_note's text")
    return text.replace(find, content, 1)
# endregion find-replace


# region find-part
def find_part(text: str, heading: str | None) -> Part:
    """The part of the text an edit works on (see the module's docstring)."""
    note = parse_note("", text)
    starts = line_starts(text)
    if heading is None:
        return Part(starts(note.body_line), len(text))
    if "\r" in text.replace("\r\n", ""):  # a lone CR is a line break to the parser, not to this code
        raise EditError("This note has line breaks made of a lone carriage return; edit it with find_replace")
    if heading.startswith("^"):
        return block_part(note, heading, starts)
    found = section_lines(note.body, heading)
    if found is None:
        raise EditError(no_such_heading(note, heading))
    first, after = (line + note.body_line - 1 for line in found)
    lines = text.split("\n")
    last = after - 1  # the section's last line that is not blank, or its heading line
    while last > first and not lines[last - 1].strip():
        last -= 1
    return Part(starts(first + 1), starts(last + 1))


def block_part(note, heading: str, starts) -> Part:
    wanted = heading[1:].lower()
    block = next((block for block in note.blocks if block.id.lower() == wanted), None)
    if block is None:
        ids = ", ".join("^" + block.id for block in note.blocks) or "none"
        raise EditError(f"The note has no block {shown(heading)}; its block ids: {ids}")
    own_lines = block.text.split("\n")
    last = block.line + len(own_lines) - 1
    return Part(starts(block.line), starts(last) + len(own_lines[-1]), block=True)


def line_starts(text: str):
    """starts(n): the offset where line n (from 1) begins; past the last line, the text's end."""
    offsets = [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]
    return lambda line: offsets[line - 1] if line <= len(offsets) else len(text)
# endregion find-part


def no_such_heading(note, heading: str) -> str:
    headings = ", ".join(shown(h.text) for h in note.outline) or "none"
    return f"The note has no heading {shown(heading)}; its headings: {headings}"
