"""The link graph: which note links to which, with links resolved as Obsidian resolves them.

Step 5 parses the links a note writes ([[Koji]], ![[Focaccia]], [text](Bulk%20fermentation.md),
"[[Koji]]" in a property). This module answers what they point at, and the question
the other way round: which notes link to this one (get_backlinks).

Decisions:
- Resolution, in order (resolve below): an empty target ([[#Heading]]) is the linking
  note itself; then the exact vault path ("Bread/Focaccia", vault-rooted, '/' only,
  '.md' optional, a leading '/' allowed); then, among the notes with that file name, the
  one in the linking note's own folder, else the one with the shortest path (fewest
  characters, ties alphabetical, so the answer never depends on reading order). A
  target with folders that is not an exact path matches the notes whose path ends with
  it ("Bread/Troubleshooting" finds "Archive/Bread/Troubleshooting.md"), as Obsidian's
  partial paths do. "./Note" and "../Folder/Note" (Obsidian's "relative path" link
  format) are taken from the linking note's folder and must name a note exactly.
- Case: every comparison ignores case (str.lower, as Obsidian's toLowerCase) and
  Unicode spelling (NFC): macOS may store "Crème" decomposed, a model types it composed.
- Aliases: Obsidian's help says a link to an alias is written [[Target|alias]] and
  that Obsidian itself writes it so; that is an ordinary link to Target here. A bare
  [[alias]] is left unresolved, as Obsidian leaves it (a backlink Obsidian does not
  show would mislead), but it names the note whose alias it is as a hint (alias_of),
  so the author can be told which link to write. Two notes with that alias: the
  same-folder, then shortest-path rule picks the one named.
- Attachments: a target that is no note but ends in a file extension Obsidian opens
  (.png, .pdf, .canvas, ... see ATTACHMENT_EXTENSIONS; also .csv) is an attachment. It
  is reported as such by outgoing(), never counted as unresolved, and never part of the
  note graph (no backlinks for files that are not notes). Whether the file exists is
  not checked: the graph knows notes, not every file of the vault.
- Embeds (![[Note]]) are links: they count as backlinks, as Obsidian counts them.
- A note's links to itself ([[#Heading]], [[Own name]]) are not backlinks.
- Keeping resolution right while notes change: notes are indexed by path, file name
  and alias, and each note's links are kept as written, never resolved in advance.
  Links are resolved when asked, with a few dictionary lookups each. So adding
  "Ferments/Troubleshooting.md" re-points every bare [[Troubleshooting]] in Ferments/ at
  once, with nothing to recompute; update_note and remove_note touch one note's entries.
  backlinks() looks only at the links whose last path segment is the note's name
  (linkers_by_name), so it costs the links that could point at the note, not the
  whole vault. A rename is remove_note(old) then update_note(new).
- Stored, not read again (step 10): a note's entry goes into its file of the index,
  beside its chunks (entry_to_store), and a restart puts the graph together from the
  stored entries (stored_entries_into, from_stored) without opening a note; reconcile.py
  reads again only the notes whose stamp changed. The context lines stay in that file
  (index.py keeps them with the texts): an entry made of a stored one has None for each,
  and contexts() reads them when an answer shows them.
"""
import dataclasses
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate
from typing import NamedTuple

from markdown import Link
from notes import parse_note
from vault import NoteNotFound, Vault, VaultError, shown

# Obsidian's accepted file formats (its help: "Accepted file formats"), and .csv, which
# vaults often keep as attachments. Any other extension on a target that matches no
# note makes it an unresolved note link: "[[Release v1.2]]" is a note yet to be written.
ATTACHMENT_EXTENSIONS = frozenset({
    "base", "canvas", "pdf", "csv",
    "avif", "bmp", "gif", "jpeg", "jpg", "png", "svg", "webp",
    "flac", "m4a", "mp3", "ogg", "wav", "webm", "3gp",
    "mkv", "mov", "mp4", "ogv",
})
CONTEXT_CHARS = 200  # how much of the linking line a backlink shows
MAX_NAME_CHARS = 1024  # longer than any real note's name or path (see key)

# How a link found its note (ResolvedLink.via).
SELF, PATH, NAME = "self", "path", "name"
# What a link points at (ResolvedLink.kind).
NOTE, ATTACHMENT, UNRESOLVED = "note", "attachment", "unresolved"


class Backlink(NamedTuple):
    source: str  # the vault path of the note that links
    line: int  # the line of that note where the link is
    context: str  # that line, trimmed to about CONTEXT_CHARS characters around the link
    link: Link


@dataclass(frozen=True)
class ResolvedLink:
    source: str  # the note the link is written in
    link: Link
    context: str
    kind: str  # NOTE, ATTACHMENT or UNRESOLVED
    target: str | None  # the note's vault path when kind is NOTE, else None
    via: str = ""  # how the note was found: SELF, PATH or NAME
    alias_of: str | None = None  # UNRESOLVED only: the note that has the target as an alias


@dataclass
class NoteLinks:
    """What the graph keeps of one note: its aliases, its links as written, and its tags
    (the graph reads every note and hears of every change, so list_tags asks it too)."""

    aliases: list[str]
    links: list[tuple[Link, str | None]]  # each link with its context line (None: LinkGraph.contexts)
    tags: list[str]  # each tag once, with its parents: "work/tasks" gives "work" too


def key(text: str) -> str:
    """How names are compared: composed Unicode, lower case. A text longer than
    MAX_NAME_CHARS is only lowered: NFC sorts a run of accents in time that grows with
    its square (15 s for a link of 128,000 characters), and a link that long names no
    real note, so it stays unresolved."""
    if len(text) > MAX_NAME_CHARS:
        return text.lower()
    return unicodedata.normalize("NFC", text).lower()


def path_key(path: str) -> str:
    """A note path or link target as compared: "Bread/Focaccia.md" -> "bread/focaccia"."""
    text = key(path)
    return text[:-3] if text.endswith(".md") else text


def name_key(path_or_target: str) -> str:
    """The last segment as compared: "Bread/Focaccia.md" -> "focaccia". Notes are indexed
    by it, and so are links, which is how backlinks find the links that may point here."""
    return name_of(path_key(path_or_target))


def name_of(path_or_target: str) -> str:
    """The last segment: "Bread/Focaccia" -> "Focaccia"."""
    return path_or_target.rpartition("/")[2]


def folder_of(path: str) -> str:
    return path.rpartition("/")[0]


def extension_of(target: str) -> str:
    """"crumb-chart.svg" -> "svg"; "" when the name has no dot."""
    name = name_of(target)
    return name.rpartition(".")[2].lower() if "." in name else ""


class LinkGraph:
    """Every note's links, and the indexes that resolve them. Safe to share between threads."""

    def __init__(self, vault: Vault):
        self.vault = vault
        self.lock = threading.RLock()  # the watcher updates while tools ask
        self.notes: dict[str, NoteLinks] = {}
        self.by_path: dict[str, set[str]] = {}  # path_key -> notes (two only on a case-sensitive disk)
        self.by_name: dict[str, set[str]] = {}  # key of the file name -> notes
        self.by_alias: dict[str, set[str]] = {}  # key of an alias -> notes
        self.linkers_by_name: dict[str, set[str]] = {}  # key of a link's last segment -> linking notes
        self.stored_contexts = None  # see contexts

    @classmethod
    def build(cls, vault: Vault) -> "LinkGraph":
        """Read and parse every note of the vault once: a millisecond or two a note (2.5 s
        for 2,000 notes of 3 KB), two thirds of it step 5's parse_note. The whole parse is
        used, not a links-only shortcut, so "the links of a note" has one definition."""
        graph = cls(vault)
        for path in vault.all_notes():  # Obsidian's excluded files too: links to them resolve
            graph.update_note(path)
        return graph

    @classmethod
    def from_stored(cls, vault: Vault, stored: dict[str, dict], stored_contexts) -> "LinkGraph":
        """The graph of the entries a load or a first build found stored (stored_entries_into).
        A damaged one is left out: reconcile reads that note again, as it does a note whose
        meta holds none (an index from before). stored_contexts(path) gives the context
        lines the index file of a note holds, or None (contexts)."""
        graph = cls(vault)
        graph.stored_contexts = stored_contexts
        for path, data in stored.items():
            try:
                graph._remember(path, entry_from_store(data))
            except (KeyError, TypeError, ValueError):
                continue
        return graph

    def put(self, path: str, entry: NoteLinks) -> None:
        """Replace what the graph knows of one note with an entry read elsewhere."""
        with self.lock:
            self._forget(path)
            self._remember(path, entry)

    def update_note(self, path: str) -> None:
        """Read one note again (new or changed) and replace what the graph knew of it.
        A note that has gone is removed; one that cannot be read keeps its name, so links
        to it still resolve, but has no links of its own. Call it from one thread (step 9's
        job queue): two updates of one note racing could store the older text last."""
        try:
            relative, text = self.vault.read_note(path)  # relative: the spelling on disk
        except NoteNotFound:
            return self.remove_note(path)
        except VaultError:  # too large, unreadable: it exists, its links are unknown
            relative, text = path, ""
        entry = read_entry(relative, text)  # parsed outside the lock: queries go on meanwhile
        with self.lock:
            self._forget(path)
            self._forget(relative)
            self._remember(relative, entry)

    def remove_note(self, path: str) -> None:
        with self.lock:
            self._forget(path)

    def _remember(self, path: str, entry: NoteLinks) -> None:
        self.notes[path] = entry
        self.by_path.setdefault(path_key(path), set()).add(path)
        self.by_name.setdefault(name_key(path), set()).add(path)
        for alias in entry.aliases:
            self.by_alias.setdefault(key(alias), set()).add(path)
        for link, _ in entry.links:
            self.linkers_by_name.setdefault(name_key(link.target), set()).add(path)

    def _forget(self, path: str) -> None:
        entry = self.notes.pop(path, None)
        if entry is None:
            return
        drop(self.by_path, path_key(path), path)
        drop(self.by_name, name_key(path), path)
        for alias in entry.aliases:
            drop(self.by_alias, key(alias), path)
        for link, _ in entry.links:
            drop(self.linkers_by_name, name_key(link.target), path)

    # region resolve
    def resolve(self, target: str, source: str) -> tuple[str | None, str]:
        """The note a link target written in `source` points at, and how it was found
        (SELF, PATH or NAME); (None, "") when no note matches. Aliases are not names
        (see alias_of)."""
        with self.lock:
            if not target:
                return source, SELF
            wanted = vault_rooted(target, source)
            if wanted is None:  # "../" above the vault root
                return None, ""
            exact = self.by_path.get(path_key(wanted))
            if exact:
                return pick(exact, source), PATH
            if target.startswith(("./", "../")):  # a relative path names one file, exactly
                return None, ""
            named = self.same_name(wanted)
            if named:
                return pick(named, source), NAME
            return None, ""
    # endregion resolve

    def alias_of(self, target: str, source: str) -> str | None:
        """The note that has this link target as an alias, if any: the hint an unresolved
        [[alias]] carries."""
        with self.lock:
            aliased = self.by_alias.get(key(target))
            return pick(aliased, source) if aliased else None

    def candidates(self, target: str) -> list[str]:
        """Every note a link target written at the vault root could mean: the exact path,
        else the notes of that name, sorted. resolve picks one of them."""
        with self.lock:
            wanted = vault_rooted(target, "")
            if wanted is None:
                return []
            exact = self.by_path.get(path_key(wanted))
            if exact or target.startswith(("./", "../")):
                return sorted(exact or ())
            return sorted(self.same_name(wanted))

    def same_name(self, wanted: str) -> set[str]:
        """The notes named like the target's last segment; for "Folder/Note", only those
        whose path ends with "/Folder/Note"."""
        candidates = self.by_name.get(name_key(wanted), set())
        if "/" not in wanted:
            return candidates
        ending = "/" + path_key(wanted)
        return {path for path in candidates if path_key(path).endswith(ending)}

    def resolved(self, source: str, link: Link, context: str) -> ResolvedLink:
        """A link with what it points at: a note, an attachment, or nothing."""
        target, via = self.resolve(link.target, source)
        if target is not None:
            return ResolvedLink(source, link, context, NOTE, target, via)
        if extension_of(link.target) in ATTACHMENT_EXTENSIONS:
            return ResolvedLink(source, link, context, ATTACHMENT, None)
        return ResolvedLink(source, link, context, UNRESOLVED, None, alias_of=self.alias_of(link.target, source))

    def __contains__(self, path: str) -> bool:
        return path in self.notes

    def __len__(self) -> int:
        return len(self.notes)

    def note_paths(self) -> list[str]:
        with self.lock:
            return sorted(self.notes)

    def entry(self, path: str) -> NoteLinks:
        entry = self.notes.get(path)
        if entry is None:
            raise NoteNotFound(f"No note {shown(path)} in the vault; list the notes to see which exist")
        return entry

    def outgoing(self, path: str) -> list[ResolvedLink]:
        """Every link the note writes, in order, each with what it points at."""
        with self.lock:
            entry = self.entry(path)
            return [self.resolved(path, link, context) for (link, _), context in zip(entry.links, self.contexts(path))]

    # region backlinks
    def backlinks(self, path: str) -> list[Backlink]:
        """The links from other notes that resolve to this one, by source path and line."""
        with self.lock:
            found = []
            for source, numbers in self.linking_here(path).items():
                links, contexts = self.notes[source].links, self.contexts(source)
                found += [Backlink(source, links[n][0].line, contexts[n], links[n][0]) for n in numbers]
            return sorted(found, key=lambda backlink: (backlink.source, backlink.line))

    def linking_here(self, path: str) -> dict[str, list[int]]:
        """{note: the numbers of its links that resolve to this one} for every other note
        that links here; no context line is read."""
        with self.lock:
            self.entry(path)  # refuses a note the graph does not know
            name, found = name_key(path), {}
            for source in self.linkers_by_name.get(name, set()) - {path}:
                numbers = [number for number, (link, _) in enumerate(self.notes[source].links)
                           if name_key(link.target) == name and self.resolve(link.target, source)[0] == path]
                if numbers:
                    found[source] = numbers
            return found
    # endregion backlinks

    def unresolved(self, path: str | None = None) -> list[ResolvedLink]:
        """The links that match no note (attachments are not among them), of one note or
        of the whole vault, by source path and line."""
        with self.lock:
            found = []
            for source in [path] if path is not None else sorted(self.notes):
                links = [self.resolved(source, link, "") for link, _ in self.entry(source).links]
                numbers = [number for number, link in enumerate(links) if link.kind == UNRESOLVED]
                contexts = self.contexts(source) if numbers else []
                found += [dataclasses.replace(links[n], context=contexts[n]) for n in numbers]
            return found

    # region contexts
    def contexts(self, path: str) -> list[str]:
        """The context line of each link of a note, in order. An entry from_stored made (at a
        restart or a first build) holds None for each: the lines are in the note's file of
        the index, read here, when an answer shows them (stored_contexts). A file replaced
        since the entry was made, by an edit whose entry is yet to come, may hold other
        links: when the counts differ, the lines are left empty."""
        links = self.notes[path].links
        if not links or links[0][1] is not None:
            return [context for _, context in links]
        stored = self.stored_contexts(path) if self.stored_contexts else None
        return stored if stored is not None and len(stored) == len(links) else [""] * len(links)
    # endregion contexts

    def tag_counts(self) -> dict[str, int]:
        """Every tag of the vault (lower case, as tags compare) and how many notes have
        it; a note tagged "work/tasks" counts for "work" too, once however many children."""
        with self.lock:
            return dict(Counter(tag for entry in self.notes.values() for tag in entry.tags))

    def neighbours(self, path: str) -> tuple[set[str], set[str]]:
        """(the notes this one links to, the notes that link to it), as Obsidian's graph
        view shows them: never itself, and no excluded file (excluded_files.py)."""
        with self.lock:
            targets = (self.resolve(link.target, path)[0] for link, _ in self.entry(path).links)
            out = {target for target in targets if target is not None} - {path}
            back = set(self.linking_here(path))  # neither reads a context line
        excluded = self.vault.excluded
        return {note for note in out if not excluded(note)}, {note for note in back if not excluded(note)}


def read_entry(path: str, text: str) -> NoteLinks:
    """Parse a note (step 5) and keep what the graph needs: aliases, links, their lines, tags."""
    return entry_of(parse_note(name_of(path).removesuffix(".md"), text), text)


def entry_of(note, text: str) -> NoteLinks:
    """What the graph keeps of a note parse_note has parsed from `text`."""
    lines = NoteLines(text, note.body)
    links = [(link, context_of(link, lines)) for link in note.links]
    return NoteLinks(note.aliases, links, sorted(note.tag_keys()))


# region stored-links
# A link as the index stores it: a list of its fields in this order. Its context line is
# stored apart, in "contexts" (contexts).
LINK_FIELDS = {"target": str, "subpath": str, "display": str, "embed": bool, "line": int,
               "markdown": bool, "from_property": str}
STORED_LINK_TYPES = tuple(LINK_FIELDS.values())


def entry_to_store(entry: NoteLinks) -> dict:
    """A note's entry as JSON, kept in the note's file of the index (reconcile.py)."""
    links = [[getattr(link, name) for name in LINK_FIELDS] for link, _ in entry.links]
    return {"aliases": entry.aliases, "tags": entry.tags, "links": links,
            "contexts": [context for _, context in entry.links]}


def stored_entries_into(stored: dict[str, dict]):
    """A function that puts the entry stored in a note's file into `stored`, by path, as the
    index reads the file (ChunkIndex.load's on_links); from_stored makes the graph of them.
    They are checked there, not here: a search needs no links, and is answered meanwhile."""
    def take(path: str, data) -> None:
        stored[path] = data
    return take


def entry_from_store(data: dict) -> NoteLinks:
    """The entry entry_to_store wrote; ValueError if it is not what it wrote. Without its
    "contexts" (index.py keeps them in the file), each link's context is None."""
    links = []
    for item in data["links"]:
        # One comparison of types per link, made in C: a restart checks 100,000 links or more.
        if type(item) is not list or tuple(map(type, item)) != STORED_LINK_TYPES:
            raise ValueError(f"a stored link is damaged: {item!r}")
        links.append(Link(*item))
    contexts = data.get("contexts")
    if contexts is None:  # left in the file by the index: read when shown (LinkGraph.contexts)
        contexts = [None] * len(links)
    elif type(contexts) is not list or len(contexts) != len(links) or not all(type(c) is str for c in contexts):
        raise ValueError("stored contexts are not a text for each link")
    for texts in (data["aliases"], data["tags"]):
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            raise ValueError("stored aliases or tags are not a list of texts")
    return NoteLinks(data["aliases"], list(zip(links, contexts)), data["tags"])
# endregion stored-links


def vault_rooted(target: str, source: str) -> str | None:
    """The target as a path from the vault root. "./x" and "../x" start at the linking
    note's folder; a leading "/" is the root itself. None when ".." climbs above the root."""
    if not target.startswith(("./", "../")):
        return target.lstrip("/")
    parts = folder_of(source).split("/") if folder_of(source) else []
    for part in target.split("/"):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


# region pick
def pick(candidates: set[str], source: str) -> str:
    """Of several notes a link could mean: the one in the linking note's folder, else the
    shortest path, ties broken alphabetically."""
    folder = key(folder_of(source))
    return min(candidates, key=lambda path: (key(folder_of(path)) != folder, len(path), path))
# endregion pick


def drop(index: dict[str, set[str]], name: str, path: str) -> None:
    """Remove path from index[name], and the entry when it is left empty."""
    members = index.get(name)
    if members is not None:
        members.discard(path)
        if not members:
            del index[name]


class NoteLines:
    """A note's lines as parse_note numbers them, and where a link of its body stands in
    its line. Each line is stripped once, however many links it holds."""

    def __init__(self, text: str, body: str):
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # as parse_note reads it
        self.lines = text.split("\n")
        self.starts = list(accumulate((len(line) + 1 for line in self.lines), initial=0))  # in text
        self.body_start = len(text) - len(body)  # the body ends the text; Link.span counts from it
        self.stripped: dict[int, tuple[str, int]] = {}  # line number -> (line.strip(), characters cut before)

    def place(self, link: Link) -> tuple[str, int, int]:
        """The link's line, stripped, and where the link starts and ends in it."""
        if not 0 < link.line <= len(self.lines):
            return "", 0, 0
        if link.line not in self.stripped:
            line = self.lines[link.line - 1]
            self.stripped[link.line] = line.strip(), len(line) - len(line.lstrip())
        line, cut = self.stripped[link.line]
        shift = self.body_start - self.starts[link.line - 1] - cut  # from the body to the stripped line
        return line, link.span[0] + shift, link.span[1] + shift


def context_of(link: Link, lines: NoteLines) -> str:
    """The line that holds the link, trimmed around it to about CONTEXT_CHARS characters.
    A link in a property shows as `property: [[link]]`: its line may hold only the key."""
    if link.from_property:
        return f"{link.from_property}: {written(link)}"
    line, start, end = lines.place(link)
    # Centred where the link itself writes its target, or at the line's start (-1) when it
    # does not (a Markdown link's %20). Searching the whole line for each of its links
    # took minutes on a line of 1 MiB.
    return trimmed(line, line.find(link.target or "[[#", start, end))


def trimmed(line: str, around: int) -> str:
    """line cut to CONTEXT_CHARS characters centred near position `around`, marked with "…"."""
    if len(line) <= CONTEXT_CHARS:
        return line
    start = min(max(0, around - CONTEXT_CHARS // 3), len(line) - CONTEXT_CHARS)
    piece = line[start : start + CONTEXT_CHARS]
    return ("…" if start > 0 else "") + piece + ("…" if start + CONTEXT_CHARS < len(line) else "")


def written(link: Link) -> str:
    """The link as Obsidian writes it: ![[Target#subpath|display]]."""
    text = link.target + (f"#{link.subpath}" if link.subpath else "") + (f"|{link.display}" if link.display else "")
    return ("!" if link.embed else "") + f"[[{text}]]"
