"""Embeds shown as Obsidian shows them: get_note puts the note, section or block that
![[Note]], ![[Note#Heading]] or ![[Note#^id]] names in place of the link.

Decisions:
- What is embedded is found the way a link is (links.py resolves the target) and read
  the way get_note reads a note (vault.read_note): a path that leaves the vault, a
  symlink out of it, a note too large, all are refused here exactly as there.
- The embedded text is a quote that names its source, "> Embedded from Glossary.md#^kahm:",
  so a model can tell the note's own words from borrowed ones, and where to read more.
  It stays inside what holds the embed, as in Obsidian: an embed in a list item is
  quoted in that item, one in a quote or callout is quoted inside it.
- Embeds inside embeds are shown too, MAX_DEPTH levels deep. A part already being shown
  (a note, "Note.md#Heading", "Note.md#^id") is not shown again inside itself: A embeds
  B embeds A stops at the second A. A note may show its other sections, as Obsidian's
  help does, but not the section that holds the embed.
- The whole answer keeps to the size of one note read (MAX_NOTE_BYTES): an embed that
  would pass it stays a link.
- An embed that is not shown stays as written and is listed with the reason (no such
  note, heading or block, a refusal, too deep, too large). Files that are not notes
  (![[chart.svg]], ![[paper.pdf]]) stay links without a word: there is no text to show.
- One answer looks at MAX_EMBEDS embeds at most, shown or not; the rest stay as
  written, unread, and the first of them is listed saying so. Each embed looked at is
  a lookup and perhaps a read: a note of 75,000 embeds would otherwise take seconds,
  and answer with megabytes of reasons.
- One answer reads and parses each note once, however many embeds name it, and
  MAX_READ_BYTES of notes in all: past them an embed stays a link, with that reason.
  A note that embedded a missing block of itself 1,000 times was parsed 1,000 times,
  two minutes for a note of 1 MiB.
"""
import re

from links import ATTACHMENT_EXTENSIONS, NOTE, UNRESOLVED, LinkGraph, extension_of
from markdown import Link, find_links
from notes import Note, parse_note
from resources import title_of
from vault import MAX_NOTE_BYTES, Vault, VaultError, shown

MAX_DEPTH = 3  # a note, the notes it embeds, theirs, and theirs
MAX_EMBEDS = 1000  # embeds looked at in one answer, at every depth
MAX_READ_BYTES = 4 * MAX_NOTE_BYTES  # notes read and parsed for one answer's embeds
# What opens a line inside quotes and list items: "> ", "> > ", "- ", "  1. ", "> - [ ] ",
# or the indent of a list item's next paragraph.
CONTAINERS = re.compile(r"((?:[ \t]*>[ \t]?)*)([ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[.\][ \t]+)?|[ \t]+)?")


class Embeds:
    """Expands the embeds of one answer; `not_shown` collects those left as links."""

    # region budget
    def __init__(self, vault: Vault, graph: LinkGraph, size: int):
        self.vault, self.graph = vault, graph
        self.room = MAX_NOTE_BYTES - size  # what the embedded text may add to the answer
        self.not_shown: list[dict] = []
        self.looked_at = 0
        self.notes: dict[str, tuple[str, Note] | str] = {}  # each note read: (path, note), or why not
        self.read_room = MAX_READ_BYTES  # what more may be read
    # endregion budget

    # region expand
    def expand(self, text: str, source: str, within: tuple[str, ...], indent: int = 0) -> str:
        """`text`, written in the note `source`, with each note embed replaced by its quote;
        `within` names the parts being shown, outermost first, `text` last (part_name);
        `indent`: the bytes that the containers around `text` will put before each line."""
        pieces, done = [], 0
        for link in find_links(text):
            if not link.embed:
                continue
            self.looked_at += 1
            start, end = link.span
            if self.looked_at > MAX_EMBEDS:  # every level above stops too, silently
                if self.looked_at == MAX_EMBEDS + 1:
                    self.skip(text[start:end], source, f"only {MAX_EMBEDS} embeds are looked at in one answer; "
                                                       "this one and those after it stay as written")
                break
            markers = CONTAINERS.match(text, text.rfind("\n", 0, start) + 1, start)  # in the line up to the embed
            prefix = markers.group(1) + re.sub(r"\S", " ", markers.group(2) or "")  # "- " continues as "  "
            quote = self.quote(link, text[start:end], source, within, indent + len(prefix.encode("utf-8")))
            if quote is not None:
                before = "" if markers.end() == start else "\n" + prefix  # words before it: a line of its own
                after = "\n" + prefix if end < len(text) and text[end] != "\n" else ""
                pieces += [text[done:start], before, quote.replace("\n", "\n" + prefix), after]
                done = end
        return "".join(pieces) + text[done:]
    # endregion expand

    # region quote
    def quote(self, link: Link, written: str, source: str, within: tuple[str, ...], indent: int) -> str | None:
        """The quote that replaces one embed, or None (and a reason noted) to leave it;
        `indent` bytes will stand before each of its lines."""
        found = self.graph.resolved(source, link, "")
        if found.kind != NOTE:
            if found.kind == UNRESOLVED:
                self.skip(written, source, f"no note {shown(link.target)} in the vault")
            return None
        label = part_name(found.target, link.subpath)
        if label.lower() in (part.lower() for part in within):  # subpaths compare without case
            return self.skip(written, source, f"{label} is already shown around it")
        if len(within) > MAX_DEPTH:
            return self.skip(written, source, f"embeds are shown {MAX_DEPTH} levels deep")
        read = self.read(found.target)  # (path, note), or why it cannot be read
        if isinstance(read, str):
            return self.skip(written, source, read)
        path, note = read
        part = note.section(link.subpath) if link.subpath else note.body  # properties are not shown
        if part is None:
            kind = "block" if link.subpath.startswith("^") else "heading"
            return self.skip(written, source, f"{path} has no {kind} {shown(link.subpath)}")
        cost = quoted_size(part, label, len(within), indent) - len(written.encode("utf-8"))
        if cost > self.room:
            return self.skip(written, source, f"the answer would pass {MAX_NOTE_BYTES // 2**20} MiB")
        self.room -= cost
        inner = self.expand(part, path, within + (label,), indent)
        lines = inner.strip("\n").split("\n")  # a note ends with a line break: no empty "> " last
        return "\n".join(["> Embedded from " + label + ":"] + ["> " + line for line in lines])
    # endregion quote

    # region read-once
    def read(self, target: str) -> tuple[str, Note] | str:
        """The note at `target` (its path, the note parsed), or why it cannot be shown;
        read once in one answer, however many embeds name it."""
        if target not in self.notes:
            self.notes[target] = self.read_and_parse(target)
        return self.notes[target]

    def read_and_parse(self, target: str) -> tuple[str, Note] | str:
        """As read_note and parse_note, until MAX_READ_BYTES have been read."""
        if self.read_room <= 0:
            return f"embeds read {MAX_READ_BYTES // 2**20} MiB of notes at most in one answer"
        try:
            path, text = self.vault.read_note(target)
        except VaultError as refused:
            return str(refused)
        self.read_room -= len(text.encode("utf-8"))
        return path, parse_note(title_of(path), text)
    # endregion read-once

    def skip(self, written: str, source: str, reason: str) -> None:
        self.not_shown.append({"embed": written, "in": source, "reason": reason})


def waiting_embeds(text: str, source: str, reason: str) -> list[dict]:
    """The embeds of `text` listed as not shown, for `reason`: the link graph that finds
    their notes is not there yet. Attachments stay links without a word, as in
    expand, and MAX_EMBEDS are listed at most, then the first of the rest."""
    embeds = [text[link.span[0] : link.span[1]] for link in find_links(text)
              if link.embed and extension_of(link.target) not in ATTACHMENT_EXTENSIONS]
    listed = [{"embed": written, "in": source, "reason": reason} for written in embeds[:MAX_EMBEDS]]
    if len(embeds) > MAX_EMBEDS:
        listed.append({"embed": embeds[MAX_EMBEDS], "in": source, "reason": f"only {MAX_EMBEDS} embeds are "
                       "listed in one answer; this one and those after it stay as written"})
    return listed


def part_name(path: str, subpath: str) -> str:
    """What a quote is labelled with, and how parts being shown are told apart."""
    return f"{path}#{subpath}" if subpath else path


# region quoted-size
def quoted_size(text: str, label: str, depth: int, indent: int = 0) -> int:
    """Bytes the text takes once quoted at this depth under its label: "> " before each
    line, per level, `indent` bytes of the containers around it, and the line breaks
    expand may put around it. Bytes, not characters: a label 'Ü/a.md' is two bytes
    longer than it is long."""
    lines = text.count("\n") + 2  # its lines and the label's
    around = 2 * (1 + indent)  # a line break before the quote and one after, where the embed had none
    return len(f"Embedded from {label}:\n\n{text}".encode("utf-8")) + (2 * depth + indent) * lines + around
# endregion quoted-size
