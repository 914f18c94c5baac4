"""The body of a note read the way Obsidian reads it: headings, sections, links and tags.

Code, comments and math hide what is inside them: a `# line` in a code fence is not a
heading, a `[[link]]` in a comment is not a link. So everything here first asks
mask() for a copy of the text with those parts blanked out (same length, same line
breaks) and searches that copy; what it reports is taken from the real text.

Every function is pure: text in, data out. Line numbers are 1-based; `first_line` says
on which line of the note the text starts (the body follows the frontmatter), so the
numbers match what an editor shows. A caller that asks several questions of the same
text may pass `masked=mask(text)` to each, so the masking is done once.
"""
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from urllib.parse import unquote


@dataclass
class Heading:
    level: int  # 1 to 6, the number of #
    text: str
    line: int


@dataclass
class Section:
    heading: str  # "" for the text before the first heading
    level: int  # 0 for the text before the first heading
    path: list[str]  # the headings it sits under, its own last: ["Day 1", "Timing"]
    line: int  # where it starts (its heading line)
    text: str  # its own text, heading line included, up to the next heading of any level


@dataclass
class Chunk:
    text: str  # "Note title > Day 1 > Timing" and a blank line, then the piece itself
    path: list[str]  # the headings it sits under, without a first heading that repeats the title
    line: int  # where the piece starts


@dataclass
class Link:
    target: str  # the note or file as written, "Folder/Note" ("Note.md" becomes "Note"); "" = this note
    subpath: str = ""  # after the first "#": "Heading", "H1#H2", "^block-id", "page=3"
    display: str = ""  # the text after "|", or inside [..] for a Markdown link; "" when none
    embed: bool = False  # ![[...]] or ![...](...)
    line: int = 0
    markdown: bool = False  # written [text](target) rather than [[target]]
    from_property: str = ""  # the frontmatter property it was found in; "" for the body
    # Where find_links found it, text[start:end], for a caller that replaces the link (an
    # embed shown in place). Not compared: it counts from whatever text was searched.
    span: tuple[int, int] = field(default=(0, 0), compare=False)

    @property
    def block(self) -> str:
        """The block id of a [[Note#^id]] link, else ""."""
        return self.subpath[1:] if self.subpath.startswith("^") else ""


@dataclass
class Block:
    id: str  # as written after "^": "peak-signs"
    line: int  # where the block starts
    text: str  # the block as written, its "^id" left out


@dataclass
class Tag:
    name: str  # as written, without "#": "Ferment/Lacto"
    key: str = field(init=False)  # what tags are compared by: "ferment/lacto"
    line: int = 0
    in_frontmatter: bool = False

    def __post_init__(self):
        self.key = self.name.lower()  # tags are case-insensitive


# region mask
def mask(text: str) -> str:
    """The text with code, comments and math replaced by spaces; line breaks stay.

    Hidden: fenced code (``` or ~~~), indented code, `inline code`, %%comments%%,
    <!-- HTML comments -->, $$math blocks$$ and $inline math$. A fence or comment left
    open hides the rest of the note; a `$$` with no `$$` anywhere after it is plain text.
    """
    masker = _Masker(text.rfind("$$"))
    lines, offset = [], 0
    for line in text.split("\n"):
        lines.append(masker.line(line, offset))
        offset += len(line) + 1
    return "\n".join(lines)
# endregion mask


# region mask-patterns
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_QUOTE = re.compile(r"(?:[ ]{0,3}>[ ]?)*")  # the > markers of a blockquote or callout
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_INLINE = re.compile(r"\\.|`+|%%|<!--|\$\$|\$")  # where something hidden may start
_CLOSER = {"%%": "%%", "<!--": "-->", "$$": "$$"}
_BACKTICKS = re.compile(r"`+")
_MATH_END = re.compile(r"(?<=[^\s\\])\$(?!\d)")  # closes $inline math$; "$5 to $10" is not math
# endregion mask-patterns


class _Masker:
    """Blanks one line at a time, remembering what is still open from the lines before."""

    def __init__(self, last_double_dollar: int):
        self.fence = None  # (character, length, blockquote depth) of an open code fence
        self.closer = None  # "%%", "-->" or "$$" while a comment or math block is open
        self.last_double_dollar = last_double_dollar
        self.blank_before = True
        self.in_list = False  # indented lines in a list are list content, not code
        self.in_code = False  # inside an indented code block

    def line(self, line: str, offset: int) -> str:
        """The line with its hidden parts blanked; `offset` is where it starts in the text."""
        if self.fence:
            return self._fenced(line, offset)
        if self.closer:
            return self._inline(line, offset)
        if not line.strip():
            self.blank_before = True
            return line
        indent = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())
        blank_before, self.blank_before = self.blank_before, False
        # indented code cannot interrupt a paragraph or a list; blank lines do not end it
        self.in_code = indent >= 4 and not self.in_list and (blank_before or self.in_code)
        if self.in_code:
            return " " * len(line)
        quote = _QUOTE.match(line).group()
        fence = _FENCE.fullmatch(line, len(quote))
        if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            self.fence = (fence.group(1)[0], len(fence.group(1)), quote.count(">"))
            return " " * len(line)
        if _LIST_ITEM.match(line):
            self.in_list = True
        elif indent == 0 and blank_before:
            self.in_list = False
        return self._inline(line, offset)

    def _fenced(self, line: str, offset: int) -> str:
        char, length, depth = self.fence
        quote = _QUOTE.match(line).group()
        if quote.count(">") < depth:  # the blockquote or callout holding the fence has ended
            self.fence = None
            return self.line(line, offset)
        rest = line[len(quote) :].strip()
        if len(rest) >= length and rest == char * len(rest):  # same character, no info string
            self.fence = None
        return " " * len(line)

    # region inline
    def _inline(self, line: str, offset: int) -> str:
        """Blank code spans, comments and math in one line; it may start inside an open one."""
        out, pos, no_math_closer = [], 0, False
        code_runs = _backtick_runs(line) if "`" in line else {}
        if self.closer:
            end = line.find(self.closer)
            if end < 0:
                return " " * len(line)
            pos = end + len(self.closer)
            out.append(" " * pos)
            self.closer = None
        kept = pos
        while (found := _INLINE.search(line, pos)) is not None:
            start, token = found.start(), found.group()
            end = None
            if token[0] == "`":
                end = _code_span_end(code_runs, found.end(), len(token))
            elif token in _CLOSER and (token != "$$" or offset + start < self.last_double_dollar):
                closer = line.find(_CLOSER[token], found.end())
                if closer < 0:  # open until a later line closes it
                    self.closer = _CLOSER[token]
                    out += [line[kept:start], " " * (len(line) - start)]
                    return "".join(out)
                end = closer + len(_CLOSER[token])
            elif token == "$" and not no_math_closer and line[found.end() : found.end() + 1].strip():
                math = _MATH_END.search(line, found.end() + 1)
                no_math_closer = math is None
                end = math.end() if math else None
            if end is None:
                pos = found.end()
                continue
            out += [line[kept:start], " " * (end - start)]
            pos = kept = end
        out.append(line[kept:])
        return "".join(out)
    # endregion inline


# region backtick-runs
def _backtick_runs(line: str) -> dict[int, list[int]]:
    """Where each run of backticks in the line starts, listed by the run's length.

    Made once per line, then searched by bisection: looking along the rest of the line
    for a closer at each opening run cost a line of runs of every length (` `` ``` ...)
    its length times the number of runs."""
    runs = {}
    for run in _BACKTICKS.finditer(line):
        runs.setdefault(len(run.group()), []).append(run.start())
    return runs


def _code_span_end(code_runs: dict[int, list[int]], pos: int, length: int) -> int | None:
    """Where a code span opened by `length` backticks ends: at the first run of exactly as
    many that starts at `pos` or later."""
    starts = code_runs.get(length, [])
    index = bisect_left(starts, pos)
    return starts[index] + length if index < len(starts) else None
# endregion backtick-runs


# region headings
_HEADING = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]|$)")


def find_headings(text: str, first_line: int = 1, masked: str | None = None) -> list[Heading]:
    """The outline: every ATX heading (`## Text`) outside code, comments and math."""
    headings = []
    masked_lines = (masked if masked is not None else mask(text)).split("\n")
    for number, (line, masked_line) in enumerate(zip(text.split("\n"), masked_lines, strict=True)):
        found = _HEADING.match(masked_line)
        if found:
            title = _without_closing_hashes(line[found.end() :].strip())
            headings.append(Heading(len(found.group(1)), title.strip(), first_line + number))
    return headings
# endregion headings


# region closing-hashes
def _without_closing_hashes(title: str) -> str:
    """`Text ##` is "Text": a closing run of # goes when a space or a tab comes before it,
    or nothing does (`##` alone is ""); `C#` keeps its #."""
    # String methods, not a regular expression: one like (^|[ \t]+)#+$ is tried from every
    # blank to the end of the line, so a heading of a million blanks took hours.
    kept = title.rstrip("#")
    if kept == title or (kept and kept[-1] not in " \t"):
        return title
    return kept.rstrip(" \t")
# endregion closing-hashes


def split_sections(text: str, first_line: int = 1, masked: str | None = None) -> list[Section]:
    """The text cut at every heading; each section knows the headings above it."""
    lines = text.split("\n")
    starts = [(h, h.line - first_line) for h in find_headings(text, first_line, masked)]
    if not starts or starts[0][1] > 0:
        starts.insert(0, (None, 0))  # the text before the first heading
    sections, path = [], []  # path: (level, heading) of the headings we are under
    for (heading, start), (_, end) in zip(starts, starts[1:] + [(None, len(lines))], strict=True):
        own = lines[start:end]
        while own and not own[-1].strip():
            own.pop()
        if heading is None:
            blank = next((n for n, line in enumerate(own) if line.strip()), len(own))
            if own[blank:]:
                sections.append(Section("", 0, [], first_line + blank, "\n".join(own[blank:])))
            continue
        while path and path[-1][0] >= heading.level:
            path.pop()
        path.append((heading.level, heading.text))
        headings_above = [title for _, title in path]
        sections.append(Section(heading.text, heading.level, headings_above, heading.line, "\n".join(own)))
    return sections


# region section-text
def section_text(text: str, subpath: str) -> str | None:
    """The text under a heading, subsections included, heading line first; None if absent.

    `subpath` is what follows "#" in a link: "Timing", or "Day 2#Timing" for the Timing
    under Day 2. Headings compare without regard to case or repeated spaces.
    """
    found = section_lines(text, subpath)
    if found is None:
        return None
    start, end = found
    return "\n".join(text.split("\n")[start - 1 : end - 1]).rstrip()


def section_lines(text: str, subpath: str) -> tuple[int, int] | None:
    """Where section_text's section is: its heading's line, and the line after its last
    (the next heading of its level or above, or one past the end). Lines count from 1."""
    wanted = [_heading_key(part) for part in subpath.split("#") if part.strip()]
    headings = find_headings(text)
    path = []  # (level, key) of the headings above the current one
    for index, heading in enumerate(headings):
        while path and path[-1][0] >= heading.level:
            path.pop()
        path.append((heading.level, _heading_key(heading.text)))
        if wanted and _ends_with_chain([key for _, key in path], wanted):
            later = (h.line for h in headings[index + 1 :] if h.level <= heading.level)
            return heading.line, next(later, text.count("\n") + 2)
    return None
# endregion section-text


# region heading-key
def _heading_key(heading: str) -> str:
    """A heading as compared. A link in it counts by the text it shows: `### [[Properties]]`
    is found as "Properties", since a link's subpath cannot hold "[[" (and as written too)."""
    shown = _WIKILINK_IN_HEADING.sub(lambda found: found.group(2) or found.group(1), heading)
    return " ".join(shown.split()).lower()


# [[Target]], [[Target#Heading]] or [[Target|shown text]] inside a heading's text. No "["
# inside, as in _WIKILINK: else each "[[" of a heading of "[[[[..." is tried to its end.
_WIKILINK_IN_HEADING = re.compile(r"!?\[\[([^\[\]|#]*)(?:#[^\[\]|]*)?(?:\|([^\[\]]*))?\]\]")
# endregion heading-key


def _ends_with_chain(path: list[str], wanted: list[str]) -> bool:
    """True when the last heading is wanted[-1] and the others appear above it, in order."""
    if path[-1] != wanted[-1]:
        return False
    above = iter(path[:-1])
    return all(any(h == part for h in above) for part in wanted[:-1])


# region find-blocks
# "^id" at the end of a line, after a space or alone on it; Obsidian allows Latin letters,
# digits and "-" in an id.
_BLOCK_ID = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$")

# Blocks may overlap: an id at the end of every line of a paragraph names the paragraph
# up to that line each time, and 100,000 such lines would copy it 100,000 times. So the
# texts of a note's blocks hold this many characters in all, and past it are cut; no
# real note comes near it (a note is at most 1 MB).
MAX_BLOCK_TEXT = 4_000_000


def find_blocks(text: str, first_line: int = 1, masked: str | None = None) -> list[Block]:
    """Every block given an id, as Obsidian finds them, each id once (the first wins).

    An id ends the last line of a paragraph, a list item, a quote or a callout, or stands
    alone on the line right after it. Alone after a blank line, it names the whole block
    above the blank: how a list, a quote or a table gets an id.
    """
    masked = masked if masked is not None else mask(text)
    if "^" not in masked:  # no id, as in most notes: no need to see where blocks start
        return []
    lines, masked_lines = text.split("\n"), masked.split("\n")
    line_starts = list(accumulate((len(line) + 1 for line in lines), initial=0))  # offsets in text
    run_starts, block_starts = _block_starts(masked_lines)
    blocks, room = {}, MAX_BLOCK_TEXT
    for number, masked_line in enumerate(masked_lines):
        found = _BLOCK_ID.search(masked_line)
        if not found or _HEADING.match(masked_line) or found.group(1).lower() in blocks:
            continue  # an id seen before is skipped before any work is done for it
        alone = not masked_line[: found.start()].strip()
        last = number - 1 if alone else number  # the block's last line
        after_blank = alone and last >= 0 and not masked_lines[last].strip()
        while last >= 0 and not masked_lines[last].strip():
            last -= 1
        if last < 0 or _HEADING.match(masked_lines[last]):  # a heading is no block
            continue
        start = run_starts[last] if after_blank else block_starts[last]
        # its lines as written, without the id, cut to what is left of MAX_BLOCK_TEXT
        end = line_starts[last] + len(lines[last] if alone else lines[last][: found.start()].rstrip())
        own = text[line_starts[start] : min(end, line_starts[start] + room)]
        room -= len(own)
        blocks[found.group(1).lower()] = Block(found.group(1), first_line + start, own)
    return list(blocks.values())
# endregion find-blocks


# region block-starts
def _block_starts(masked_lines: list[str]) -> tuple[list[int | None], list[int | None]]:
    """For each line, the first line of its run (the lines up to a blank line or a
    heading) and of its block: in a list, the item it is in, else the run again.

    One pass down the note, where walking up from each id read a paragraph again for
    every id in it."""
    run_starts, block_starts = [], []
    run_start = item_start = None  # None on a blank line or a heading
    for number, line in enumerate(masked_lines):
        if not line.strip() or _HEADING.match(line):
            run_start = item_start = None
        else:
            if run_start is None:
                run_start = number
            if _LIST_ITEM.match(line):
                item_start = number
        run_starts.append(run_start)
        block_starts.append(run_start if item_start is None else item_start)
    return run_starts, block_starts
# endregion block-starts


# region chunks
def chunk_sections(title: str, sections: list[Section], max_chars: int = 2000) -> list[Chunk]:
    """Pieces of at most max_chars characters, each starting with "Title > H1 > H2".

    A piece never spans two sections. A long section is cut between paragraphs; a
    paragraph longer than a piece between lines; a line longer than that between words.
    """
    chunks = []
    for section in sections:
        # "# Focaccia" at the top of Focaccia.md says the title again: say it once.
        trail = section.path[1:] if section.path[:1] == [title] else section.path
        # Each heading cut before the join: a heading of 500 KB would be copied whole for
        # every section under it, only to be cut afterwards.
        keep = max_chars // 4
        context = " > ".join(heading[:keep] for heading in [title] + trail)[:keep]
        budget = max(1, max_chars - len(context) - 2)
        body = section.text.partition("\n")[2] if section.level else section.text
        first = section.line + 1 if section.level else section.line
        for line, piece in _pack(_paragraphs(body, first), budget, "\n\n"):
            chunks.append(Chunk(f"{context}\n\n{piece}", trail, line))
    return chunks
# endregion chunks


def _paragraphs(text: str, first_line: int) -> list[tuple[int, str]]:
    """(line, text) of each run of non-blank lines."""
    paragraphs, current = [], []
    for number, line in enumerate(text.split("\n") + [""], first_line):
        if line.strip():
            current.append((number, line))
        elif current:
            paragraphs.append((current[0][0], "\n".join(text for _, text in current)))
            current = []
    return paragraphs


def _pack(pieces: list[tuple[int, str]], budget: int, joiner: str) -> list[tuple[int, str]]:
    """Join neighbouring pieces while they fit in budget; cut up those that never fit."""
    packed, group, size = [], [], 0  # group: the pieces joined so far, size: their length

    def flush():
        if group:
            packed.append((group[0][0], joiner.join(piece for _, piece in group)))

    for line, piece in pieces:
        if len(piece) > budget:
            flush()
            group, size = [], 0
            packed.extend(_cut(line, piece, budget, joiner))
        elif group and size + len(joiner) + len(piece) <= budget:
            group.append((line, piece))
            size += len(joiner) + len(piece)
        else:
            flush()
            group, size = [(line, piece)], len(piece)
    flush()
    return packed


def _cut(line: int, piece: str, budget: int, joiner: str) -> list[tuple[int, str]]:
    if joiner == "\n\n":  # a paragraph: cut between its lines
        return _pack(list(enumerate(piece.split("\n"), line)), budget, "\n")
    parts, start = [], 0  # a single line: cut between words, anywhere when a word is too long
    while len(piece) - start > budget:
        space = piece.rfind(" ", start + budget // 2, start + budget + 1)
        end = space if space > start else start + budget
        parts.append((line, piece[start:end]))
        start = _SPACES.match(piece, end).end()
    return parts + ([(line, piece[start:])] if start < len(piece) else [])


_SPACES = re.compile(" *")


_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
_MARKDOWN_LINK = re.compile(
    r"(!?)\[([^\[\]\n]*)\]\(\s*(<[^<>\n]*>|(?:[^()\s]|\([^()\s]*\))+)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:|//")  # https:, mailto:, obsidian:, //host


# region find-links
def find_links(text: str, first_line: int = 1, masked: str | None = None) -> list[Link]:
    """Wikilinks, embeds and Markdown links to notes or files, in the order written.

    External URLs are not vault links; nothing inside code, comments or math counts.
    """
    masked = masked if masked is not None else mask(text)
    line_of = _line_finder(text, first_line)
    links = []
    for m in _WIKILINK.finditer(masked):
        links.append((m, _wikilink(m.group(1) == "!", text[m.start(2) : m.end(2)])))
    for m in _MARKDOWN_LINK.finditer(_blank_wikilinks(masked)):
        written = [text[m.start(n) : m.end(n)] for n in (1, 2, 3)]
        links.append((m, _markdown_link(*written)))
    links = [(match, link) for match, link in links if link]
    links.sort(key=lambda item: item[0].start())
    for match, link in links:
        link.line, link.span = line_of(match.start()), match.span()
    return [link for _, link in links]
# endregion find-links


def wikilinks_in(text: str) -> list[Link]:
    """The [[links]] in a short text such as a property value; no code or comments there."""
    links = (_wikilink(m.group(1) == "!", m.group(2)) for m in _WIKILINK.finditer(text))
    return [link for link in links if link]


# region wikilink
def _wikilink(embed: bool, inside: str) -> Link | None:
    """[[Folder/Note#Heading|shown text]] taken apart; None for [[]] and the like."""
    destination, _, display = inside.partition("|")
    destination = destination.rstrip("\\")  # [[Note\|text]]: the | escaped inside a table
    target, _, subpath = destination.partition("#")
    target, subpath = _drop_md(target.strip()), subpath.strip()
    if not target and not subpath:
        return None
    return Link(target, subpath, display.strip(), embed=embed)
# endregion wikilink


def _markdown_link(bang: str, display: str, destination: str) -> Link | None:
    """[text](Note%20Name.md#Heading) or [text](<Note Name.md>); None for external URLs."""
    if destination.startswith("<"):
        destination = destination[1:-1]
    destination = destination.strip()
    if not destination or _SCHEME.match(destination):
        return None
    target, _, subpath = destination.partition("#")
    target, subpath = _drop_md(unquote(target)), unquote(subpath)
    if not target and not subpath:
        return None
    return Link(target, subpath, display.strip(), embed=bang == "!", markdown=True)


def _blank_wikilinks(text: str) -> str:
    return _WIKILINK.sub(lambda m: " " * len(m.group()), text)


def _drop_md(target: str) -> str:
    """[[Note.md]] and [[Note]] are the same link."""
    return target[:-3] if target.lower().endswith(".md") else target


# region line-finder
def _line_finder(text: str, first_line: int):
    """A function from a position in text to its line number."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    return lambda position: first_line + bisect_right(starts, position) - 1
# endregion line-finder


# region tag-chars
# A tag is made of letters of any script, digits, emoji, "_", "-" and "/": anything but
# white space and punctuation (Unicode's general block, CJK and full-width marks such as
# "。" and "，"), except the zero-width joiner U+200D, which glues one emoji ("👩‍🍳").
_TAG_CHAR = (r"[^\s!\"#$%&'()*+,.:;<=>?@\[\\\]^`{|}~\u2000-\u200c\u200e-\u206f\u2e00-\u2e7f"
             r"\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")
_TAG = re.compile(rf"#({_TAG_CHAR}+(?:#{_TAG_CHAR}+)*)")
_TAG_NAME = re.compile(rf"{_TAG_CHAR}+")
_DIGITS = re.compile(r"[0-9]+")
# endregion tag-chars


# region tags
def find_tags(text: str, first_line: int = 1, masked: str | None = None) -> list[Tag]:
    """Every #tag in the text, in order, repeats included.

    A tag starts the line or follows white space (so `a#b`, `(#b`, `\\#b` and URLs
    like `x.com/#b` hold none); `#a#b` is two tags. Not in code, comments, math, or
    the inside of a [[link]]; `# Heading` is a heading.
    """
    masked = _blank_wikilinks(masked if masked is not None else mask(text))
    line_of = _line_finder(text, first_line)
    tags = []
    for match in _TAG.finditer(masked):
        start = match.start()
        if start > 0 and not text[start - 1].isspace():
            continue
        for name in match.group(1).split("#"):
            if is_tag_name(name):
                tags.append(Tag(name, line=line_of(start)))
    return tags


def is_tag_name(name: str) -> bool:
    """Tag characters only, and not only digits: `y1984` is a tag name, `1984` is not."""
    return bool(_TAG_NAME.fullmatch(name)) and not _DIGITS.fullmatch(name)
# endregion tags


# region tag-parents
MAX_TAG_PARENTS = 16  # levels of a nested tag filed as its parents; no real tag nests deeper


def tag_with_parents(key: str) -> list[str]:
    """A nested tag and the tags above it: "a/b/c" gives ["a", "a/b", "a/b/c"].

    Each parent is a copy of the start of the tag, so every level would add one: a
    note holding 64 KB of "#a/a/a/..." would ask for gigabytes. So the parents stop
    at MAX_TAG_PARENTS levels; a deeper tag still counts under each of those, and as
    itself, and the cost stays in proportion to the tag's length."""
    parts = [part for part in key.split("/") if part]
    if not parts:
        return []
    parents = ["/".join(parts[: n + 1]) for n in range(min(len(parts) - 1, MAX_TAG_PARENTS))]
    return parents + ["/".join(parts)]
# endregion tag-parents
