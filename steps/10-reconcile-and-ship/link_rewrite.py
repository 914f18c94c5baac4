"""The plan of a move: which notes change, and how, when a note moves or is renamed.

move_note moves a note from `old` to `new` and, as Obsidian's "Automatically update
internal links" does, rewrites the links that would break. plan_move writes nothing: it
reads the notes concerned and answers, for each, its text as read (`before`, so the
writer can refuse a note changed since) and its text with only the links replaced
(`after`). Every byte outside a rewritten link's target is kept: display text, #heading,
#^block, .md, <angle brackets>, a table's \\|, the line endings.

Decisions:
- Which links: every link, in a note's body or in a property ("[[Note]]"), whose target
  the graph resolves to one note before the move and would resolve to another after it.
  That is each link to `old` (it must now reach `new`), and also a link to some other note
  that the move would capture: moving a note to B/Plan.md makes a bare [[Plan]] written
  in B/ mean it rather than C/Plan.md, so that link is rewritten to keep C/Plan. Only a
  link whose last segment is the old or the new name can change its meaning, plus any
  link of the moved note itself (its folder changes, so the same-folder rule does), so
  only those notes are read.
- A link whose words still reach the right note after the move is left as written:
  moving A/Plan.md to B/Plan.md leaves [[Plan]] alone while the name is unique. The
  author chose that form, and a move should touch as few notes as it can.
- The form of a rewritten link (link_text): a relative link ("./x", "../x") stays
  relative, from the linking note's folder; a link written with folders stays a path
  from the vault root (a leading "/" kept); a bare name follows the vault's "New link
  format" (.obsidian/app.json, newLinkFormat): "shortest" (Obsidian's default) writes
  the bare name when no other note has it, else the full path, as Obsidian's own
  fileToLinktext does; "relative" and "absolute" write those paths. A wikilink stays a
  wikilink and a Markdown link a Markdown link (useMarkdownLinks decides only how new
  links are written). Each form reaches the note by construction: a relative path and a
  full path name it exactly, and a bare name is written only when no other note has it.
- Markdown links are written encoded as they are read: a space is %20, and "#", "%",
  "(", ")" and the like are encoded; a destination in <angle brackets> stays raw.
- Links that match no note are left alone, except the moved note's own relative links
  ("../img/crumb.png", a note yet to be written): they are re-aimed from its new folder
  at the same place. A dangling [[Name]] that the moved note now answers is Obsidian's
  way of creating the note a link asked for; it is not rewritten.
- The moved note's own rewrite names it at `old`, where its text was read; the writer
  checks `before` there and writes `after` at `new`. `before` is the text read_note
  gives: a byte order mark is not in it, CR LF line endings are.
- Only the notes the graph knows are read: a note the server does not serve keeps its
  links as they were, since the server may neither read nor write it.
"""
import json
from bisect import bisect_left
from typing import NamedTuple
from urllib.parse import quote, unquote

from links import LinkGraph, folder_of, name_key, name_of, vault_rooted
from markdown import _MARKDOWN_LINK, _WIKILINK, Link, _wikilink, find_links
from frontmatter import split_frontmatter
from notes import parse_note
from vault import Vault, VaultError, shown

SHORTEST, RELATIVE, ABSOLUTE = "shortest", "relative", "absolute"  # Obsidian's newLinkFormat
NO_LINK_CHARACTERS = "[]#|^"  # a link cannot name a note with these in its name (Obsidian's help)
# What a Markdown link's destination must encode; letters of any script stay as written.
MARKDOWN_UNSAFE = set(" %#()<>[]\\`^|\"{}")


class Rewrite(NamedTuple):
    path: str  # the note to change, at the path it was read from
    before: str  # its text as read
    after: str  # the same text with the links replaced


def plan_move(vault: Vault, graph: LinkGraph, old: str, new: str) -> list[Rewrite]:
    """Every note whose links must change for `old` to move to `new`, by path."""
    check_move(graph, old, new)
    moved = graph_after_move(graph, old, new)
    style = link_format(vault)
    names = {name_key(old), name_key(new)}
    with graph.lock:
        sources = {source for name in names for source in graph.linkers_by_name.get(name, ())}
    plan = []
    for source in sorted(sources | {old}):
        try:
            _, text = vault.read_note(source)
        except VaultError:  # gone or unreadable since the graph read it: it holds no links
            continue
        edits = []
        for link, start, end in located_links(text):
            target = new_target(link, source, old, new, graph, moved, style)
            written = text[start:end]
            rewritten = written if target is None else link_with_target(written, link, target)
            if rewritten != written:
                edits.append((start, end, rewritten))
        if edits:
            plan.append(Rewrite(source, text, replaced(text, edits)))
    return plan


def check_move(graph: LinkGraph, old: str, new: str) -> None:
    graph.entry(old)  # NoteNotFound for a note the graph does not know
    if not new.endswith(".md"):
        raise VaultError(f"{shown(new)} is not a note's path; a note's name ends in .md")
    if new != old and new in graph:
        raise VaultError(f"{shown(new)} already exists; choose another name, or move that note first")
    bad = [character for character in NO_LINK_CHARACTERS if character in name_of(new)]
    if bad:
        raise VaultError(f"{shown(new)} has {' '.join(bad)} in its name, which no link can write; "
                         "choose a name without them")


def graph_after_move(graph: LinkGraph, old: str, new: str) -> LinkGraph:
    """A copy of the graph's indexes with the note at `new`, to ask how links resolve then.
    The entries are shared, not copied: only the indexes that resolve names differ."""
    moved = LinkGraph(graph.vault)
    with graph.lock:
        for path, entry in graph.notes.items():
            moved._remember(new if path == old else path, entry)
    return moved


def link_format(vault: Vault) -> str:
    """The vault's "New link format" setting; Obsidian's default when it says nothing usable."""
    try:
        with open(vault.root / ".obsidian" / "app.json", encoding="utf-8") as file:
            setting = json.load(file).get("newLinkFormat")
    except (OSError, ValueError, AttributeError):  # absent, unreadable, not JSON, not an object
        return SHORTEST
    return setting if setting in (SHORTEST, RELATIVE, ABSOLUTE) else SHORTEST


# region new-target
def new_target(link: Link, source: str, old: str, new: str, graph: LinkGraph, moved: LinkGraph,
               style: str) -> str | None:
    """What the link's target must become for it to reach, after the move, the note it
    reaches now (or `new` for `old`); None when it needs no change."""
    writer = new if source == old else source  # where the link will be written from
    target, _ = graph.resolve(link.target, source)
    if target is None:
        return relative_place(link.target, old, new) if source == old else None
    wanted = new if target == old else target
    if moved.resolve(link.target, writer)[0] == wanted:
        return None
    return link_text(moved, wanted, writer, link.target, style)
# endregion new-target


# region link-text
def link_text(moved: LinkGraph, note: str, source: str, written: str, style: str) -> str:
    """The target Obsidian would write for a link from `source` to `note`, in the form the
    old link was written in; `moved` is the graph with the note already where it goes."""
    full = note.removesuffix(".md")
    if written.startswith(("./", "../")):
        return relative_path(full, source)
    if "/" in written.lstrip("/"):  # a path from the vault root
        return ("/" if written.startswith("/") else "") + full
    if style == RELATIVE:
        return relative_path(full, source)
    if style == SHORTEST and moved.candidates(name_of(full)) == [note]:
        return name_of(full)  # no other note has this name
    return full
# endregion link-text


def relative_path(place: str, source: str) -> str:
    """The path from the folder of `source` to `place`, "./" or "../" first."""
    here = folder_of(source).split("/") if folder_of(source) else []
    there = place.split("/")
    common = 0
    while common < min(len(here), len(there) - 1) and here[common] == there[common]:
        common += 1
    ups = len(here) - common
    return ("../" * ups or "./") + "/".join(there[common:])


def relative_place(written: str, old: str, new: str) -> str | None:
    """A relative target of the moved note that matches no note, re-aimed from its new
    folder at the place it named from the old one."""
    if not written.startswith(("./", "../")) or folder_of(old) == folder_of(new):
        return None
    place = vault_rooted(written, old)
    return None if place is None else relative_path(place, new)


def located_links(text: str) -> list[tuple[Link, int, int]]:
    """Every link of a note as the graph reads it, with where it is written in `text`."""
    plain = text.replace("\r\n", "\n").replace("\r", "\n")  # as parse_note reads it
    yaml, body, _ = split_frontmatter(plain)
    found = []
    if yaml is not None:
        start = plain.index("\n") + 1  # the line after the opening ---
        found += property_links(plain, start, yaml)
    body_start = len(plain) - len(body)
    found += [(link, body_start + link.span[0], body_start + link.span[1]) for link in find_links(body)]
    to_text = position_in(text)
    return [(link, to_text(start), to_text(end)) for link, start, end in found]


def property_links(plain: str, start: int, yaml: str) -> list[tuple[Link, int, int]]:
    """The [[links]] written in the frontmatter that the properties hold: a quoted
    "[[Note]]" is one, and so is one inside a text ("see [[Note]]"); one in a comment is
    not, nor an unquoted [[Note]] right after "key:" or "-", which YAML reads as a list."""
    held = [link_key(link) for link in parse_note("", plain).links if link.from_property]
    found = []
    for match in _WIKILINK.finditer(yaml):
        before = yaml[yaml.rfind("\n", 0, match.start()) + 1 : match.start()].strip()
        link = _wikilink(match.group(1) == "!", match.group(2))
        if link and link_key(link) in held and not before.startswith("#") and not before.endswith((":", "-", ",", "[")):
            held.remove(link_key(link))
            found.append((link, start + match.start(), start + match.end()))
    return found


def link_key(link: Link) -> tuple:
    return link.target, link.subpath, link.display, link.embed


def position_in(text: str):
    """A function from a position in the text with CR LF read as LF to one in `text`."""
    crlf = []
    at = text.find("\r\n")
    while at >= 0:
        crlf.append(at - len(crlf))  # where that line break stands once CR LF is one character
        at = text.find("\r\n", at + 2)
    return lambda position: position + bisect_left(crlf, position)  # the CRs before it


def link_with_target(written: str, link: Link, target: str) -> str:
    """The link as written, with only its target replaced: the display text, the
    #heading or #^block, a .md and the brackets stay as they were."""
    start, end = (markdown_target if link.markdown else wikilink_target)(written)
    old = written[start:end]
    if old.lower().endswith(".md"):
        target += ".md"
    if link.markdown and not written[start - 1 : start] == "<":
        target = encoded(target, like=old)
    return written[:start] + target + written[end:]


def encoded(target: str, like: str) -> str:
    """A Markdown link's target percent-encoded: what would end or break the link always,
    and letters beyond ASCII too when the old target spelled its own that way ("Cr%C3%A8me")."""
    spelled_out = like.isascii() and not unquote(like).isascii()
    return "".join(quote(c) if c in MARKDOWN_UNSAFE or not c.isprintable() or (spelled_out and not c.isascii())
                   else c for c in target)


def wikilink_target(written: str) -> tuple[int, int]:
    """Where the target stands in "[[target#heading|display]]" (or "![[...]]")."""
    opening = written.index("[[") + 2
    inside = written[opening:-2]
    destination = inside.partition("|")[0].rstrip("\\")  # [[Note\|text]] in a table
    target = destination.partition("#")[0]
    lead = len(target) - len(target.lstrip())
    return opening + lead, opening + len(target.rstrip())


def markdown_target(written: str) -> tuple[int, int]:
    """Where the target stands in "[text](target#heading "title")": the same pattern
    find_links read it with names the destination, angle brackets inside."""
    match = _MARKDOWN_LINK.fullmatch(written)
    start, end = match.span(3)
    if written[start] == "<":
        start, end = start + 1, end - 1
    destination = written[start:end]
    lead = len(destination) - len(destination.lstrip())
    return start + lead, start + len(destination.rstrip().partition("#")[0])


def replaced(text: str, edits: list[tuple[int, int, str]]) -> str:
    """text with each (start, end) span replaced; the spans are in order and apart."""
    pieces, kept = [], 0
    for start, end, replacement in edits:
        pieces += [text[kept:start], replacement]
        kept = end
    return "".join(pieces) + text[kept:]
