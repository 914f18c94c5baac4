"""set_properties' change of a note's text: some properties set or removed, and every
other line of the frontmatter kept byte for byte.

set_properties(text, changes) returns the new text; changes maps a property's name
to its new value, or to None to remove it. A property is its key line and the lines
of its value under it (a block list, a block of text); comments and blank lines that
follow stay with what follows. Only the lines of a property that changes are written
again; a new property goes after the last one. A note without frontmatter gets one.

Decisions:
- A value is written as Obsidian writes it: a text plain when YAML reads it back as
  the same text, else double-quoted; a list as "  - item" lines, or [a, b] when the
  property was written that way; numbers and true/false as they are.
- Every property written is read back with step 5's parser, and the whole block too:
  each changed property must read as asked, every other exactly as before, or
  nothing is written (EditError).
- Frontmatter that does not parse is not touched: which lines belong to a property
  cannot be known. Nested objects are refused: Obsidian's properties have no such type.
"""
import json

from edits import EditError
from frontmatter import YamlError, parse_yaml, read_frontmatter
from vault import shown

LIST_INDENT = "  - "
MAX_NAME = 200
MAX_TEXT = 10_000  # characters in one value


# region set-properties
def set_properties(text: str, changes: dict) -> str:
    check_changes(changes)
    front = read_frontmatter(text)
    if front.error:
        raise EditError(f"The note's properties cannot be read ({front.error}); set_properties changes "
                        "nothing it cannot read. Fix them with find_replace, or in Obsidian")
    if front.yaml is None:
        added = "".join(written(name, value) for name, value in changes.items() if value is not None)
        new = "---\n" + added + "---\n" + text if added else text
    else:
        start = text.index("\n") + 1  # the yaml starts after the first "---" line
        new = text[:start] + changed_yaml(front.yaml, front.data, changes) + text[start + len(front.yaml):]
    check_read_back(front, new, changes)
    return new
# endregion set-properties


def check_changes(changes: dict) -> None:
    """Names that are one line of text; values Obsidian's properties can hold."""
    for name, value in changes.items():
        if not name.strip() or len(name) > MAX_NAME or any(char in name for char in "\n\r\0"):
            raise EditError(f"{shown(name)} is not a property name: one line of text, at most {MAX_NAME} characters")
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and None in value or not all(is_scalar(item) for item in items):
            raise EditError(f"The property {shown(name)} can be text, a number, true or false, a list of "
                            f"those, or null to remove it; not {shown(value)}")


def is_scalar(value) -> bool:
    if isinstance(value, str):
        return "\0" not in value and len(value) <= MAX_TEXT
    return value is None or isinstance(value, (bool, int, float)) and value == value and abs(value) != float("inf")


# region changed-yaml
def changed_yaml(yaml: str, before: dict, changes: dict) -> str:
    """The yaml block with each changed property's lines replaced, removed or added."""
    lines = yaml.split("\n")  # the block ends with a line break: the last item is ""
    spans = property_spans(lines, read_frontmatter("---\n" + yaml + "---\n").key_lines)
    after_last = max((end for _, end in spans.values()), default=0)
    added = []
    for name, value in changes.items():
        if name in spans:
            start, end = spans[name]
            flow, item = value_is_flow(lines[start]), list_item(lines[start + 1 : end])
            lines[start:end] = [None] * (end - start)  # kept in place, so later spans still hold
            if value is not None:
                lines[start] = written(name, value, flow, item).removesuffix("\n")
        elif value is not None:
            added.append(written(name, value).removesuffix("\n"))
    lines[after_last:after_last] = added
    return "\n".join(line for line in lines if line is not None)


def property_spans(lines: list[str], key_lines: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Each top-level property's lines, as [start, end) indices: from its key line to its
    value's last line; a comment or blank line before the next key is not its own."""
    starts = sorted((line - 2, name) for name, line in key_lines.items())  # note line 2 is yaml line 0
    spans = {}
    for number, (start, name) in enumerate(starts):
        end = starts[number + 1][0] if number + 1 < len(starts) else len(lines)
        while end - 1 > start and not belongs_to_value(lines[end - 1]):
            end -= 1
        spans[name] = (start, end)
    return spans


def belongs_to_value(line: str) -> bool:
    """An indented line, or a list item at the key's own indentation ("tags:\\n- a")."""
    return line[:1] in (" ", "\t") and line.strip() != "" or line.startswith("-")
# endregion changed-yaml


def value_is_flow(key_line: str) -> bool:
    return key_line.partition(":")[2].strip().startswith("[")


def list_item(value_lines: list[str]) -> str:
    """How the property's list items start ("- " or "  - "), so that new ones start alike."""
    for line in value_lines:
        if line.lstrip(" ").startswith("- "):
            return line[: line.index("-")] + "- "
    return LIST_INDENT


# region written
def written(name: str, value, flow: bool = False, item_start: str = LIST_INDENT) -> str:
    """The lines of one property, as Obsidian would write them, ending with a line break."""
    key = scalar(name, lambda text: parses(f"{text}: 0", {name: 0}))
    if not isinstance(value, list):
        return f"{key}: {scalar(value, lambda text: parses(f'x: {text}', {'x': value}))}\n"
    if not value:
        return f"{key}: []\n"
    if flow:
        items = [scalar(item, lambda text, item=item: parses(f"x: [{text}]", {"x": [item]})) for item in value]
        return f"{key}: [{', '.join(items)}]\n"
    items = [scalar(item, lambda text, item=item: parses(f"x:\n{item_start}{text}", {"x": [item]})) for item in value]
    return f"{key}:\n" + "".join(f"{item_start}{item}\n" for item in items)


def scalar(value, reads_back) -> str:
    """value as YAML: plain if it reads back as itself (reads_back), else double-quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    for candidate in (value, json.dumps(value, ensure_ascii=False)):
        if "\n" not in candidate and reads_back(candidate):
            return candidate
    raise EditError(f"{shown(value)} cannot be written as a property safely")


def parses(yaml: str, expected: dict) -> bool:
    try:
        return parse_yaml(yaml + "\n") == expected
    except YamlError:
        return False
# endregion written


# region read-back
def check_read_back(before, new_text: str, changes: dict) -> None:
    """Refuse unless the new block reads as asked, the body is untouched, and every other
    property reads as before."""
    front = read_frontmatter(new_text)
    expected = {name: value for name, value in before.data.items() if name not in changes}
    expected |= {name: value for name, value in changes.items() if value is not None}
    if front.error or front.data != expected or front.body != before.body:
        raise EditError("These properties cannot be written without changing others; nothing was written")
# endregion read-back
