"""Frontmatter: the properties block at the top of a note, read by a small, safe YAML subset.

Obsidian reads properties only when the very first line of a note is exactly `---`
(a UTF-8 byte order mark before it is fine). The block ends at the next line that is
exactly `---`; without one there is no frontmatter and the whole note is body.
`---js`, `---json` or `--- yaml` open nothing. A `...` line does not close the block:
inside it, `...` ends the YAML document, and only blank lines and comments may follow.

The subset reads what notes use: `key: value` pairs nested by indentation; block
lists (`- item`, indented under the key or not); flow lists and maps (`[a, b]`,
`{a: 1}`, so JSON frontmatter works too); plain, 'single' and "double" quoted
scalars, also over several lines; block scalars (`|`, `>`, with `-`/`+` chomping and
an indentation digit); comments. Plain scalars follow the YAML 1.2 core schema:
null/~, true/false, integers (also 0x.. and 0o..), floats (also .inf, .nan). Dates
stay text, as Obsidian shows them. Keys are always text.

It never runs or builds anything: a tag (`!!python/object`, `!custom`) is ignored and
the value read as plain data (only `!!str`, "keep this as text", is honoured); an
anchor (`&name`) is dropped; an alias (`*name`) is never expanded and stays the text
"*name". Reported as malformed, like a real YAML parser would: duplicate keys, tabs
used for indentation, a second document. Not supported, also reported as malformed:
complex keys (`? key`), directives (`%YAML`).

Hostile input cannot make it slow: a block larger than MAX_CHARS or nested deeper
than MAX_DEPTH is refused, and the work grows in step with the length of the block
(each line is looked at a few times, never once per other line).
"""
import re
from dataclasses import dataclass, field

# region limits
MAX_CHARS = 200_000  # real frontmatter is a few hundred characters
MAX_DEPTH = 64  # nesting levels of maps and lists
# endregion limits


class YamlError(ValueError):
    """Malformed or unsupported YAML, with the line (1-based, within the block) where it shows."""

    def __init__(self, line: int, reason: str):
        super().__init__(f"line {line}: {reason}")
        self.line, self.reason = line, reason


@dataclass
class Frontmatter:
    data: dict  # the properties; {} when there are none or they are malformed
    body: str  # the note without its frontmatter block
    body_line: int  # line number (1-based, in the whole note) of the body's first line
    yaml: str | None = None  # the text between the two `---` lines; None without a block
    error: str = ""  # why the block was not read, e.g. "line 3: unclosed quote"
    key_lines: dict[str, int] = field(default_factory=dict)  # line in the note of each property


# region split
def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """(yaml text or None, body, body_line): cut the frontmatter block off the top of a note."""
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte order mark is not part of the note
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip("\r") != "---":
        return None, text, 1
    pos, line = first_end + 1, 2
    while pos <= len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        if text[pos:end].rstrip("\r") == "---":
            return text[first_end + 1 : pos], text[end + 1 :], line + 1
        pos, line = end + 1, line + 1
    return None, text, 1  # no closing line: not frontmatter
# endregion split


# region read
def read_frontmatter(text: str) -> Frontmatter:
    """Split a note and parse its properties; malformed YAML leaves data empty and says why."""
    yaml, body, body_line = split_frontmatter(text)
    if yaml is None:
        return Frontmatter({}, body, body_line)
    try:
        parser = _Parser(yaml)
        data = parser.document()
    except YamlError as error:
        reason = f"frontmatter not read: line {error.line + 1} of the note: {error.reason}"
        return Frontmatter({}, body, body_line, yaml, reason)
    key_lines = {key: line + 1 for key, line in parser.key_lines.items()}  # the block starts on line 2
    return Frontmatter(data, body, body_line, yaml, key_lines=key_lines)
# endregion read


def parse_yaml(text: str) -> dict:
    """The properties a frontmatter block defines; YamlError when it is not the subset."""
    return _Parser(text).document()


class _Parser:
    """Reads block YAML line by line; flow values ([..], {..}, quotes) go to _Flow."""

    # region parser-init
    def __init__(self, text: str):
        if len(text) > MAX_CHARS:
            raise YamlError(1, f"frontmatter longer than {MAX_CHARS} characters")
        self.text = text.replace("\r\n", "\n")
        self.lines = self.text.split("\n")
        if self.lines[-1] == "":
            self.lines.pop()  # the newline that ends the last line starts no new one
        self.starts = [0]  # offset in self.text where each line starts
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.ends_with_break = self.text.endswith("\n")
        self.i = 0  # the line being read
        self.depth = 0
        self.key_lines = {}  # the line (1-based, in the block) of each top-level key
        self._cut_at_document_end()
    # endregion parser-init

    def _cut_at_document_end(self):
        for i, line in enumerate(self.lines):
            if _SECOND_DOCUMENT.match(line):
                raise YamlError(i + 1, "a second YAML document ('---') is not supported")
            if _DOCUMENT_END.match(line):
                rest = (other.lstrip() for other in [line[3:]] + self.lines[i + 1 :])
                if any(other and not other.startswith("#") for other in rest):
                    raise YamlError(i + 2, "text after the document end '...'")
                del self.lines[i:]
                self.ends_with_break = True
                return

    def document(self) -> dict:
        if not self._skip_blank():
            return {}
        value = self._block_node(self._indent(self.i), -1)
        if self._skip_blank():
            raise YamlError(self.i + 1, "this line is indented less than the first one")
        if not isinstance(value, dict):
            raise YamlError(1, "properties must be 'name: value' lines")
        return value

    def _skip_blank(self) -> bool:
        """Move past blank and comment lines; False at the end of the block."""
        while self.i < len(self.lines):
            content = self.lines[self.i].strip()
            if content and not content.startswith("#"):
                return True
            self.i += 1
        return False

    def _indent(self, i: int) -> int:
        line = self.lines[i]
        indent = len(line) - len(line.lstrip(" "))
        if line[indent : indent + 1] == "\t":
            raise YamlError(i + 1, "a tab where YAML allows only spaces for indentation")
        return indent

    def _next_indent(self) -> int:
        """Indentation of the next meaningful line, -1 at the end of the block."""
        return self._indent(self.i) if self._skip_blank() else -1

    def _content(self) -> str:
        return self.lines[self.i].strip(" ")

    # region block-node
    def _block_node(self, indent: int, parent_indent: int):
        """The map, list or scalar that starts on the current line, at this indentation."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise YamlError(self.i + 1, f"nested deeper than {MAX_DEPTH} levels")
        content = self._content()
        if _is_item(content):
            value = self._sequence(indent)
        elif _split_key(content) is not None:
            value = self._mapping(indent)
        else:
            value = self._value(self.starts[self.i] + indent, parent_indent)
        self.depth -= 1
        return value
    # endregion block-node

    def _mapping(self, indent: int) -> dict:
        result = {}
        while self._next_indent() == indent:
            content = self._content()
            entry = _split_key(content)
            if entry is None:
                expected = "a list item where" if _is_item(content) else "text where"
                raise YamlError(self.i + 1, f"{expected} a 'name: value' line was expected")
            key, value_start = entry
            if key in result:
                raise YamlError(self.i + 1, f"the key {key!r} appears twice")
            if self.depth == 1:
                self.key_lines[key] = self.i + 1
            position = self.starts[self.i] + indent + value_start
            result[key] = self._value(position, indent, list_may_follow=True)
        self._check_dedent(indent)
        return result

    def _sequence(self, indent: int) -> list:
        items = []
        while self._next_indent() == indent and _is_item(self._content()):
            line = self.lines[self.i]
            rest = line[indent + 1 :]
            column = indent + 1 + len(rest) - len(rest.lstrip(" "))
            rest = rest.strip(" ")
            if rest and not rest.startswith("#") and (_is_item(rest) or _split_key(rest)):
                # "- key: value" or "- - item": read the rest as if the dash were a space
                self.lines[self.i] = " " * column + line[column:]
                items.append(self._block_node(column, indent))
            else:
                items.append(self._value(self.starts[self.i] + column, indent))
        self._check_dedent(indent)
        return items

    def _check_dedent(self, indent: int):
        """After a map or list, the next line must belong to an outer level."""
        next_indent = self._next_indent()
        if next_indent > indent:
            raise YamlError(self.i + 1, "unexpected indentation")

    # region value
    def _value(self, position: int, parent_indent: int, list_may_follow: bool = False):
        """The value that starts at `position` in the text (after 'key:' or '- ')."""
        line = self.text[position : self.starts[self.i + 1] - 1]
        rest, as_text = _properties(line.lstrip(" \t"))
        position += len(line) - len(rest)  # where the value itself starts
        rest = rest.rstrip(" \t")
        if not rest or rest.startswith("#"):
            self.i += 1
            value = self._nested(parent_indent, list_may_follow)
            return "" if as_text and value is None else value
        if rest[0] in "|>":
            return self._block_scalar(rest, parent_indent)
        if rest[0] in "\"'[{":
            return self._flow_value(position)
        if rest[0] == "*":  # an alias is never expanded: it stays text
            alias = _strip_comment(rest)
            if not _ALIAS.fullmatch(alias):
                raise YamlError(self.i + 1, f"text after the alias: {alias[:40]!r}")
            self.i += 1
            return alias
        return self._plain(rest, parent_indent, resolve=not as_text)
    # endregion value

    def _nested(self, parent_indent: int, list_may_follow: bool):
        """A value written on the lines below its key or dash, or None when there is none."""
        indent = self._next_indent()
        if indent > parent_indent:
            return self._block_node(indent, parent_indent)
        if list_may_follow and indent == parent_indent and _is_item(self._content()):
            return self._sequence(indent)  # a list not indented under its key
        return None

    # region flow-value
    def _flow_value(self, position: int):
        value, end = _Flow(self.text, self.depth).node(position)
        while self.starts[self.i + 1] <= end:  # the value may have spanned lines
            self.i += 1
        tail = self.text[end : self.starts[self.i + 1] - 1].strip(" \t")
        if tail and not tail.startswith("#"):
            raise YamlError(self.i + 1, f"unexpected text after the value: {tail[:40]!r}")
        self.i += 1
        return value
    # endregion flow-value

    def _plain(self, first: str, parent_indent: int, resolve: bool = True):
        """An unquoted scalar; it goes on over the lines indented deeper than its parent."""
        pieces = [_check_plain(first, self.i + 1, first=True)]
        self.i += 1
        j, breaks = self.i, 0
        while j < len(self.lines) and _strip_comment(pieces[-1]) == pieces[-1]:  # a comment ends it
            content = self.lines[j].strip(" ")
            if not content:
                breaks, j = breaks + 1, j + 1
                continue
            if self._indent(j) <= parent_indent or content.startswith("#"):
                break
            pieces += ["\n" * breaks or " ", _check_plain(content, j + 1)]
            j, breaks, self.i = j + 1, 0, j + 1
        if len(pieces) == 1:
            return _resolve(_strip_comment(first)) if resolve else _strip_comment(first)
        return "".join(_strip_comment(piece) for piece in pieces)  # several lines: always text

    def _block_scalar(self, header: str, parent_indent: int) -> str:
        match = _BLOCK_HEADER.match(header)
        if not match:
            raise YamlError(self.i + 1, f"a block scalar header like '|' or '>-', not {header[:20]!r}")
        style, indicators = header[0], match.group(1)
        digits = [c for c in indicators if c.isdigit()]
        chomp = next((c for c in indicators if c in "+-"), "")
        self.i += 1
        indent = parent_indent + int(digits[0]) if digits else self._block_indent(parent_indent)
        lines = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip(" "):
                if len(line) - len(line.lstrip(" ")) < indent:
                    break
                lines.append(line[indent:])
            else:
                lines.append(line[indent:])
            self.i += 1
        final_break = self.i < len(self.lines) or self.ends_with_break
        return _block_text(lines, style, chomp, final_break)

    def _block_indent(self, parent_indent: int) -> int:
        """A block scalar's indentation is that of its first non-blank line."""
        spaces = 0  # with no text at all, lines of spaces are blank lines
        for i in range(self.i, len(self.lines)):
            line = self.lines[i]
            if line.strip(" "):
                indent = len(line) - len(line.lstrip(" "))
                return indent if indent > parent_indent else max(parent_indent + 1, spaces)
            spaces = max(spaces, len(line))
        return max(parent_indent + 1, spaces)


_SECOND_DOCUMENT = re.compile(r"---(?:[ \t]|$)")
_DOCUMENT_END = re.compile(r"\.\.\.(?:[ \t]|$)")
_COMMENT = re.compile(r"[ \t]#")
_BLOCK_HEADER = re.compile(r"[|>]([1-9][+-]?|[+-][1-9]?|)(?:[ \t]+#.*)?[ \t]*$")
_ALIAS = re.compile(r"\*[^\s,\[\]{}]+")
_COLON = re.compile(r":(?=[ \t]|$)")


def _is_item(content: str) -> bool:
    return content == "-" or content.startswith(("- ", "-\t"))


def _split_key(line_content: str) -> tuple[str, int] | None:
    """For a 'key: value' line, the key and where its value starts; None for other lines."""
    content, _ = _properties(line_content)
    skipped = len(line_content) - len(content)
    entry = _plain_or_quoted_key(content)
    return None if entry is None else (entry[0], entry[1] + skipped)


def _plain_or_quoted_key(content: str) -> tuple[str, int] | None:
    if content[:1] in ("'", '"'):
        try:
            key, end = _Flow(content, 0).node(0)
        except YamlError:
            return None
        rest = content[end:]
        if _COLON.match(rest.lstrip(" \t")):
            return str(key), len(content) - len(rest.lstrip(" \t")) + 1
        return None
    if not content or content[0] in "[]{},#&*!|>%@`" or _is_item(content):
        return None
    if content[0] in "?:" and content[1:2] in ("", " ", "\t"):
        return None  # complex keys are not supported
    match = _COLON.search(content)
    if match is None:
        return None
    key = content[: match.start()].rstrip(" \t")
    if _COMMENT.search(key):
        return None  # the colon is inside a comment
    return key, match.end()


# region properties
def _properties(text: str) -> tuple[str, bool]:
    """Drop `&anchor` and `!tag` before a value: (the value's text, whether it was `!!str`).

    An anchor only names a value for aliases, which are never expanded. A tag asks for
    a type; only `!!str` (keep this as text) is honoured, any other is ignored.
    """
    as_text, position = False, 0
    # An index walks over the names, as _Flow.node does: cutting the text after each name
    # copied the rest of the line once per name, work that grew as the square of the line.
    while text[position : position + 1] in ("&", "!"):
        name = _PROPERTY.match(text, position).group()
        as_text = as_text or name == "!!str"
        position = _SPACE_NO_COMMENT.match(text, position + len(name)).end()
    return text[position:], as_text
# endregion properties


def _strip_comment(text: str) -> str:
    match = _COMMENT.search(text)
    return text[: match.start()].rstrip() if match else text


# region check-plain
def _check_plain(text: str, line: int, first: bool = False) -> str:
    """A plain scalar cannot hold ': ' nor start with a reserved character."""
    value = _strip_comment(text)
    reserved = value[:1] in ("@", "`", "%", ",", "]", "}") or value[:2] in ("- ", "? ", ": ") or value == "-"
    if first and reserved:
        raise YamlError(line, f"a value cannot start with {value[0]!r} unless it is quoted")
    if _COLON.search(value):
        raise YamlError(line, "a ': ' inside a value that is not quoted")
    return text
# endregion check-plain


# region resolve
_NULLS = {"", "~", "null", "Null", "NULL"}
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INF_NAN = re.compile(r"[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")


def _resolve(text: str):
    """What an unquoted scalar means, by the YAML 1.2 core schema. Dates stay text."""
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if _INT.fullmatch(text):
        try:
            return int(text, 0) if text[:2] in ("0o", "0x") else int(text)
        except ValueError:
            return text  # more digits than Python converts safely
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF_NAN.fullmatch(text):
        return float(text.replace(".", "", 1))  # ".inf" -> "inf", which float() reads
    return text
# endregion resolve


def _block_text(lines: list[str], style: str, chomp: str, final_break: bool = True) -> str:
    """The value of a block scalar from its lines (indentation removed)."""
    trailing = 0
    while lines and not lines[-1]:
        lines.pop()
        trailing += 1
    text = "\n".join(lines) if style == "|" else _fold(lines)
    # the line breaks after the last line of text, its own included
    breaks = max(0, trailing + (1 if lines else 0) - (0 if final_break else 1))
    if chomp == "-":  # strip: none of them
        return text
    if chomp == "+":  # keep: all of them
        return text + "\n" * breaks
    return text + "\n" * min(1, breaks) if lines else ""  # clip: at most one


def _fold(lines: list[str]) -> str:
    """'>' joins lines with spaces; blank lines and more-indented lines keep their breaks."""
    out, breaks, previous_folds = [], 0, False
    for line in lines:
        if not line:
            breaks += 1
            continue
        folds = line[0] not in " \t"
        if not out:
            out.append("\n" * breaks)  # leading blank lines are kept
        elif previous_folds and folds:
            out.append("\n" * breaks or " ")
        else:
            out.append("\n" * (breaks + 1))
        out.append(line)
        previous_folds, breaks = folds, 0
    return "".join(out)


class _Flow:
    """Reads one flow node: "double" or 'single' quoted text, a [list] or a {map}.

    It reads from the whole block text, so a value may continue over several lines.
    """

    def __init__(self, text: str, depth: int):
        self.text, self.depth = text, depth

    def node(self, pos: int):
        """(value, position after it)."""
        pos = self._space(pos)
        as_text = False
        while self.text[pos : pos + 1] in ("&", "!"):  # see _properties
            name = _PROPERTY.match(self.text, pos).group()
            as_text = as_text or name == "!!str"
            pos = self._space(pos + len(name))
        char = self.text[pos : pos + 1]
        if char in (",", "]", "}", ":", ""):
            return ("" if as_text else None), pos
        if char == "[":
            return self._nest(self._list, pos)
        if char == "{":
            return self._nest(self._map, pos)
        if char == '"':
            return self._double(pos)
        if char == "'":
            return self._single(pos)
        return self._plain(pos, resolve=not as_text)

    # region flow-nest
    def _nest(self, read, pos: int):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise YamlError(self._line(pos), f"nested deeper than {MAX_DEPTH} levels")
        result = read(pos + 1)
        self.depth -= 1
        return result
    # endregion flow-nest

    def _list(self, pos: int):
        items = []
        while True:
            pos = self._space(pos)
            if self.text[pos : pos + 1] == "]":
                return items, pos + 1
            start = pos
            item, pos = self.node(pos)
            pos = self._space(pos)
            if self.text[pos : pos + 1] == ":":  # [a: 1] is a list holding the map {a: 1}
                key, _ = self._key(start)
                value, pos = self._map_value(pos + 1, "]")
                item = {key: value}
            items.append(item)
            pos = self._separator(pos, "]")
            if self.text[pos - 1] == "]":
                return items, pos

    def _map(self, pos: int):
        result = {}
        while True:
            pos = self._space(pos)
            if self.text[pos : pos + 1] == "}":
                return result, pos + 1
            key, pos = self._key(pos)
            pos = self._space(pos)
            value = None
            if self.text[pos : pos + 1] == ":":
                value, pos = self._map_value(pos + 1, "}")
            if key in result:
                raise YamlError(self._line(pos), f"the key {key!r} appears twice")
            result[key] = value
            pos = self._separator(pos, "}")
            if self.text[pos - 1] == "}":
                return result, pos

    def _key(self, pos: int) -> tuple[str, int]:
        """Keys are text: a plain key is kept as written, `1` stays "1"."""
        pos = self._space(pos)
        while self.text[pos : pos + 1] in ("&", "!"):  # see _properties
            pos = self._space(_PROPERTY.match(self.text, pos).end())
        if self.text[pos : pos + 1] in ("[", "{"):
            raise YamlError(self._line(pos), "a list or map used as a key")
        if self.text[pos : pos + 1] in ('"', "'"):
            return self.node(pos)
        return self._plain(pos, resolve=False)

    def _map_value(self, pos: int, closer: str):
        pos = self._space(pos)
        if self.text[pos : pos + 1] in (",", closer):
            return None, pos
        return self.node(pos)

    def _separator(self, pos: int, closer: str) -> int:
        pos = self._space(pos)
        char = self.text[pos : pos + 1]
        if char == ",":
            return pos + 1
        if char == closer:
            return pos + 1
        found = f"{char!r}" if char else "the end of the block"
        raise YamlError(self._line(pos), f"expected ',' or '{closer}' but found {found}")

    def _space(self, pos: int) -> int:
        """Skip spaces, line breaks and comments."""
        return _SPACE.match(self.text, pos).end()

    def _double(self, pos: int):
        out, pos = [], pos + 1
        while pos < len(self.text):
            char = self.text[pos]
            if char == '"':
                return _LONE_HALF.sub("\ufffd", "".join(out)), pos + 1
            if char == "\\":
                pos = self._escape(pos, out)
            elif char == "\n":
                pos = _fold_break(self.text, pos, out)
            else:
                pos = self._run(_DOUBLE_RUN, pos, out)
        raise YamlError(self._line(pos - 1), "a double quote that is never closed")

    def _escape(self, pos: int, out: list) -> int:
        code = self.text[pos + 1 : pos + 2]
        if code == "\n":  # an escaped line break joins the lines without a space
            return _SPACE_NO_COMMENT.match(self.text, pos + 2).end()
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            return pos + 2
        size = {"x": 2, "u": 4, "U": 8}.get(code, 0)
        digits = self.text[pos + 2 : pos + 2 + size]
        if not size or len(digits) < size or not _HEX.fullmatch(digits):
            raise YamlError(self._line(pos), f"unknown escape \\{code} in double quotes")
        out.append(_character(int(digits, 16), out))
        return pos + 2 + size

    def _single(self, pos: int):
        out, pos = [], pos + 1
        while pos < len(self.text):
            char = self.text[pos]
            if char == "'":
                if self.text[pos + 1 : pos + 2] != "'":
                    return "".join(out), pos + 1
                out.append("'")
                pos += 2
            elif char == "\n":
                pos = _fold_break(self.text, pos, out)
            else:
                pos = self._run(_SINGLE_RUN, pos, out)
        raise YamlError(self._line(pos - 1), "a single quote that is never closed")

    def _run(self, pattern, pos: int, out: list) -> int:
        """Ordinary characters inside quotes; spaces before a line break are dropped."""
        end = pattern.match(self.text, pos).end()
        run = self.text[pos:end]
        out.append(run.rstrip(" \t") if self.text[end : end + 1] == "\n" else run)
        return end

    def _plain(self, pos: int, resolve: bool = True):
        """Unquoted text inside [..] or {..}: it ends at , ] } or ': ' or a comment."""
        match = _FLOW_PLAIN.match(self.text, pos)
        if not match:
            char = self.text[pos : pos + 1]
            reason = f"unexpected {char!r}" if char else "the block ends inside [ or {"
            raise YamlError(self._line(pos), reason)
        raw = match.group()
        if raw[0] in "#@`%|>":
            raise YamlError(self._line(pos), f"a plain value cannot start with {raw[0]!r}; quote it")
        lines = [part.strip(" \t") for part in raw.split("\n")]
        text = " ".join(line for line in lines if line)
        return (_resolve(text) if resolve and len(lines) == 1 else text), match.end()

    def _line(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1


_SPACE = re.compile(r"(?:[ \t\n]|(?<![^ \t\n])#[^\n]*)*")
_SPACE_NO_COMMENT = re.compile(r"[ \t]*")
_LONE_HALF = re.compile("[\ud800-\udfff]")
_BREAKS = re.compile(r"\n(?:[ \t]*\n)*[ \t]*")
_PROPERTY = re.compile(r"[^\s,\[\]{}]*")
_HEX = re.compile(r"[0-9a-fA-F]+")
_DOUBLE_RUN = re.compile(r'[^"\\\n]+')
_SINGLE_RUN = re.compile(r"[^'\n]+")
# plain text in a flow: it stops at , [ ] { } at ': ' (or ':' before , ] }) and at ' #'
_FLOW_PLAIN_CHAR = r"(?:[^,\[\]{}:#\s]|:(?![\s,\[\]{}]))"
_FLOW_PLAIN = re.compile(rf"(?:{_FLOW_PLAIN_CHAR}|(?<=\S)#|[ \t\n]+(?={_FLOW_PLAIN_CHAR}))+")
_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85",
    "_": "\xa0", "L": "\u2028", "P": "\u2029",
}


def _fold_break(text: str, pos: int, out: list) -> int:
    """A line break inside quotes: one becomes a space, each further blank line a newline."""
    match = _BREAKS.match(text, pos)
    breaks = match.group().count("\n") - 1
    out.append("\n" * breaks if breaks else " ")
    return match.end()


def _character(code: int, out: list) -> str:
    """A \\u escape; JSON writes characters beyond U+FFFF as two halves, joined here."""
    if 0xDC00 <= code <= 0xDFFF and out and len(out[-1]) == 1 and 0xD800 <= ord(out[-1]) <= 0xDBFF:
        high = out.pop()
        return chr(0x10000 + (ord(high) - 0xD800) * 0x400 + (code - 0xDC00))
    return chr(code) if code <= 0x10FFFF else "\ufffd"  # a half left alone is replaced later
