"""The tools this server offers: each declared once, as data, and run by a function.

A declaration is what the model reads before it calls a tool: a name, a title, a
description written for the model, the JSON Schema of its arguments and of its
result, and hints about what it does. call_tool checks the arguments against the
schema before the tool runs, so a tool function only ever sees arguments that fit.
Every failure a model can fix (a bad argument, a path outside the vault, a missing
note) comes back as a result with isError: true, in words it can act on.
"""
import json
import logging
import math
from dataclasses import dataclass, field
from typing import Callable

from markdown import Link
from notes import parse_note
from resources import title_of
from schema import check_schema, defaults, validate
from embeds import Embeds, part_name, waiting_embeds
import daily_notes
import inbox
import long_notes
import note_moves
import note_queries
import related
import resource_links
from edits import OPERATIONS, EditError, edit_text
from properties import set_properties as set_in_text
from journal import Change, Entry, Journal, move_to_trash, undo
from note_writes import change_note, check_version, note_lock, version_of
from vault import NoteNotFound, Vault, VaultError, note_text, path_to_uri, shown
from write_policy import WritePolicy
from vault_index import NotReady, VaultIndex

log = logging.getLogger("tools")

# These tools only read, and reading twice gives the same answer: a client may run
# them without asking the user first. They touch nothing outside the vault.
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


@dataclass
class Context:
    """What a tool may use: the vault, its indexes, the inbox folder, and a way to
    tell the client how far a long call has got (progress(done, total, message))."""

    vault: Vault
    index: VaultIndex
    inbox: str  # the one folder create_note writes into
    progress: Callable = lambda done, total=None, message=None: None
    policy: WritePolicy = field(default_factory=WritePolicy)  # where the user lets the server write
    journal: Journal | None = None  # where each write is kept for undo_edit


@dataclass
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict
    output_schema: dict
    run: Callable[[Context, dict], dict]  # (context, arguments) -> structured result
    annotations: dict

    def __post_init__(self):
        check_schema(self.input_schema, f"{self.name} input")  # a broken declaration fails at import

    def declaration(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": {"title": self.title, **self.annotations},
        }


# region toolkit
def call_tool(tool: Tool, arguments, context: Context) -> dict:
    """Validate, run, and wrap the result; whatever goes wrong becomes a result the model can read."""
    if arguments is None:
        arguments = {}  # a client may leave arguments out for a tool that needs none
    problems = validate(tool.input_schema, arguments)
    if problems:
        return error_result(f"Invalid arguments for {tool.name}: " + "; ".join(problems))
    try:
        data = tool.run(context, defaults(tool.input_schema) | arguments)
    except (VaultError, NotReady) as error:
        return error_result(str(error))
    except Exception:
        log.exception("tool %s failed", tool.name)
        return error_result(f"The tool {tool.name} failed unexpectedly; the server log has details.")
    # The same data twice: structured for clients that read the output schema, and
    # as JSON text for those that only show text to the model.
    text = json.dumps(data, ensure_ascii=False, indent=2)
    content = [{"type": "text", "text": text}] + resource_links.link_blocks(tool.name, data)  # notes to open
    return {"content": content, "structuredContent": data, "isError": False}


def error_result(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": True}
# endregion toolkit


def list_notes(context: Context, arguments: dict) -> dict:
    return note_queries.list_notes(context.vault, arguments)  # sorted, filtered by time and properties


LIST_NOTES = Tool(
    name="list_notes",
    title="List notes",
    description=(
        "List the notes (Markdown files) of the user's Obsidian vault, one page at a time: `notes` "
        "gives their paths, `entries` each one's path, title and `modified` time (ISO 8601, UTC). "
        "Give `folder` to list only the notes under that folder. `sort`: \"path\" (default), "
        "\"modified\" (the note changed last first) or \"created\" (newest first). "
        "`modifiedAfter` / `modifiedBefore` (ISO 8601, e.g. \"2026-04-05\"; without a zone, the "
        "server's local time) keep the notes changed in that time. `where` keeps the notes whose "
        'properties match: {"status": "draft"} (text ignores case; a list property matches when '
        'one of its items does), {"due": {"exists": true}}. When the result has `nextCursor`, pass '
        "it as `cursor`, with the same arguments, to get the next page. Read a note with get_note."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "folder": {"type": "string", "description": 'A folder of the vault, e.g. "Bread"; omit for all.'},
            "sort": {"type": "string", "enum": list(note_queries.SORTS), "default": "path"},
            "modifiedAfter": {"type": "string", "maxLength": 64,
                              "description": 'Only notes changed at or after this, e.g. "2026-04-05".'},
            "modifiedBefore": {"type": "string", "maxLength": 64,
                               "description": 'Only notes changed before this, e.g. "2026-04-12T18:00:00Z".'},
            "where": {"type": "object", "description": 'Properties to match, e.g. {"status": "draft"} or '
                                                       '{"status": {"exists": true}}; all must match.'},
            "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50,
                      "description": "Notes per page."},
            "cursor": {"type": "string", "description": "nextCursor from the previous page."},
        },
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "notes": {"type": "array", "items": {"type": "string"}},
            "entries": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"},
                "title": {"type": "string"},
                "modified": {"type": "string", "description": "ISO 8601, UTC"},
                "created": {"type": "string", "description": "only when sorted by creation"}},
                "required": ["path", "title", "modified"]}},
            "nextCursor": {"type": "string"},
        },
        "required": ["notes", "entries"],
    },
    run=list_notes,
    annotations=READ_ONLY,
)


# region get-note
def get_note(context: Context, arguments: dict) -> dict:
    path, data, found_by = open_note(context, arguments["path"])
    text = note_text(path, data)
    note = parse_note(title_of(path), text)
    result = {
        "path": path,
        **found_by,
        "version": version_of(data),  # what an edit gives back, to show it saw this very text
        "title": note.title,
        "frontmatter": json_ready(note.frontmatter),
        "tags": [tag.name for tag in note.tags],
        "aliases": note.aliases,
        "links": [link_data(link) for link in note.links],
        "outline": [{"level": h.level, "heading": h.text, "line": h.line} for h in note.outline],
        "blocks": [{"id": block.id, "line": block.line} for block in note.blocks],
        "text": note.body,
    }
    if note.frontmatter_error:  # the model should know the properties it sees may be missing
        result["frontmatterError"] = note.frontmatter_error
    heading = arguments.get("heading")
    if heading is not None:
        section = note.section(heading)
        if section is None:
            raise VaultError(no_such_part(path, note, heading))
        result["heading"], result["text"] = heading, section
    if arguments["embeds"] and any(link.embed for link in note.links):  # else no graph is needed
        quote_embeds(context, result, heading, len(text.encode("utf-8")))
    long_notes.read_in_parts(result, arguments["maxChars"], arguments["offset"])  # a part a client keeps
    return result


def quote_embeds(context: Context, result: dict, heading: str | None, size: int) -> None:
    """Show in result["text"] what its embeds name, and list those left as links (embeds.py)."""
    path = result["path"]
    try:
        graph = context.index.link_graph()
    except NotReady as not_yet:  # the note can be read now; only its embeds need the graph
        result["embedsNotShown"] = waiting_embeds(result["text"], path, str(not_yet))
        return
    embeds = Embeds(context.vault, graph, size)
    result["text"] = embeds.expand(result["text"], path, (part_name(path, heading or ""),))
    if embeds.not_shown:
        result["embedsNotShown"] = embeds.not_shown


# region open-note
def open_note(context: Context, asked: str) -> tuple[str, bytes, dict]:
    """The note `asked` names, its bytes, and how it was found: the exact path first, else
    the note a link [[asked]] written at the vault root leads to."""
    try:
        path, data = context.vault.read_bytes(asked)
        return path, data, {}
    except NoteNotFound as not_found:
        missing = not_found
    graph = context.index.link_graph()
    target, _ = graph.resolve(asked, VAULT_ROOT)
    if target is None:
        raise NoteNotFound(f"{missing}{alias_hint(graph, asked)}")
    path, data = context.vault.read_bytes(target)  # through the vault's checks, like any path
    found_by = {"resolvedFrom": asked}
    candidates = graph.candidates(asked)
    if len(candidates) > 1:  # the link picks one; the model should know of the others
        found_by["candidates"] = candidates
    return path, data, found_by
# endregion open-note


VAULT_ROOT = ""  # a link "written at the vault root": the folder rule prefers notes there


def alias_hint(graph, target: str) -> str:
    """For a name that is only an alias: which note has it (Obsidian does not open it either)."""
    note = graph.alias_of(target, VAULT_ROOT)
    return f"; but {shown(target)} is an alias of {note}: open that path" if note else ""


def no_such_part(path: str, note, wanted: str) -> str:
    """Why a heading or block was not found, with the ones the note has, to choose from."""
    if wanted.startswith("^"):
        ids = ", ".join("^" + block.id for block in note.blocks) or "none"
        return f"{path} has no block {shown(wanted)}; its block ids: {ids}"
    headings = ", ".join(shown(h.text) for h in note.outline) or "none"
    return f"{path} has no heading {shown(wanted)}; its headings: {headings}"


def link_data(link: Link) -> dict:
    data = {"target": link.target, "line": link.line, "embed": link.embed}
    for key, value in (("subpath", link.subpath), ("display", link.display), ("property", link.from_property)):
        if value:
            data[key] = value
    return data


def json_ready(value):
    """Properties as JSON can carry them: YAML's .inf and .nan have no JSON spelling."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_ready(item) for item in value]
    return value


LINK_SCHEMA = {
    "type": "object",
    "properties": {
        "target": {"type": "string", "description": 'the note or file linked to, as written; "" for this note'},
        "subpath": {"type": "string", "description": "a heading (H1#H2) or block (^id) inside the target"},
        "display": {"type": "string"},
        "embed": {"type": "boolean"},
        "line": {"type": "integer"},
        "property": {"type": "string", "description": "the property it was found in, if not in the body"},
    },
    "required": ["target", "line", "embed"],
}

GET_NOTE = Tool(
    name="get_note",
    title="Read a note",
    description=(
        "Read one note of the user's Obsidian vault. Returns its properties (frontmatter), tags, "
        "aliases, outgoing links, outline of headings, and its Markdown text without the "
        'properties. `path` is relative to the vault, e.g. "Bread/Focaccia.md" (".md" may be left '
        'out), as list_notes gives it, or a link target as links name notes, e.g. "focaccia": '
        "then `path` in the result is the note opened, `resolvedFrom` what was asked, and "
        "`candidates` every note of that name when there are several. Give `heading` (e.g. "
        '"Shaping", or "Day 2#Timing" for a heading under another) to get only that section\'s '
        'text, or a block\'s id as `blocks` lists it, after "^" (e.g. "^peak-signs"), to get only '
        "that block. Notes the text embeds (![[Note]], ![[Note#Heading]]) are quoted in place, "
        "each naming its source; `embedsNotShown` lists those left as links, and why. `version` "
        "names the note's bytes as read: pass it to an edit. A long text comes in parts of at most "
        "`maxChars` characters: then `truncated` is true, and passing `nextOffset` as `offset` gives "
        "the next part (or read one section by its `heading`, from the outline). A path that leaves "
        "the vault is refused."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 1024,
                     "description": 'The note\'s path in the vault, e.g. "Bread/Focaccia.md", or a link '
                                    'target, e.g. "Focaccia".'},
            "heading": {"type": "string", "minLength": 1, "maxLength": 1024,
                        "description": 'Only the section under this heading, as the outline shows it, '
                                       'or only the block "^id", as blocks lists it.'},
            "embeds": {"type": "boolean", "default": True,
                       "description": "false: the text as written, each ![[embed]] left as a link."},
            "maxChars": {"type": "integer", "minimum": 100, "maximum": 1_000_000,
                         "default": long_notes.DEFAULT_MAX_CHARS,
                         "description": "The most characters of text to answer."},
            "offset": {"type": "integer", "minimum": 0, "default": 0,
                       "description": "Where the part starts: 0, or nextOffset from the part before."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "the note opened"},
            "resolvedFrom": {"type": "string", "description": "what was asked, when it was read as a link"},
            "candidates": {"type": "array", "items": {"type": "string"},
                           "description": "every note the link could mean, when more than one"},
            "version": {"type": "string", "description": "changes whenever the note's file changes; "
                                                         "edits take it to refuse a stale read"},
            "title": {"type": "string"},
            "frontmatter": {"type": "object"},
            "frontmatterError": {"type": "string", "description": "why the properties could not be read"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "aliases": {"type": "array", "items": {"type": "string"}},
            "links": {"type": "array", "items": LINK_SCHEMA},
            "outline": {"type": "array", "items": {"type": "object", "properties": {
                "level": {"type": "integer"}, "heading": {"type": "string"}, "line": {"type": "integer"}}}},
            "blocks": {"type": "array", "description": 'what "^id" names: a paragraph, list item, quote or table',
                       "items": {"type": "object", "properties": {"id": {"type": "string"}, "line": {"type": "integer"}}}},
            "heading": {"type": "string"},
            "text": {"type": "string", "description": "embedded notes quoted in place, unless embeds is false"},
            "truncated": {"type": "boolean", "description": "true when more text follows this part"},
            "nextOffset": {"type": "integer", "description": "the offset of the next part"},
            "totalChars": {"type": "integer", "description": "the length of the whole text, when read in parts"},
            "embedsNotShown": {"type": "array", "description": "embeds left as written, and why",
                               "items": {"type": "object", "properties": {
                                   "embed": {"type": "string"}, "in": {"type": "string"}, "reason": {"type": "string"}},
                                   "required": ["embed", "in", "reason"]}},
        },
        "required": ["path", "version", "title", "frontmatter", "tags", "aliases", "links", "outline", "blocks",
                     "text"],
    },
    run=get_note,
    annotations=READ_ONLY,
)
# endregion get-note

# region search-vault
def search_vault(context: Context, arguments: dict) -> dict:
    hits, progress = context.index.search_with_progress(arguments["query"], arguments["limit"],
                                                         arguments.get("folder"), arguments.get("tag"),
                                                         arguments["mode"])
    return progress | {"results": [
        {
            "path": hit.path,
            "heading": "#".join(hit.heading_path[1:]),  # as get_note's heading argument takes it
            "section": " > ".join(hit.heading_path),
            "score": round(hit.score, 4),
            "snippet": hit.snippet,
        }
        for hit in hits
    ]}
# endregion search-vault


SEARCH_VAULT = Tool(
    name="search_vault",
    title="Search the vault",
    description=(
        "Search the user's Obsidian vault for the sections that best answer a question or match "
        "some words, best first, at most one section per note. Each result has the note's `path`, "
        "the section's `heading` (pass both to get_note to read that section whole), a `snippet` "
        "and a `score` (only for comparing results of the same search). Ask in plain words, "
        'e.g. "why is my bread dense". `folder` and `tag` narrow the search ("bread" also matches '
        '"bread/sourdough"). `mode`: "hybrid" (default) weighs meaning and words together, '
        '"semantic" meaning only, "keyword" exact words only.'
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 1000},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
            "folder": {"type": "string", "maxLength": 1024, "description": 'e.g. "Ferments"'},
            "tag": {"type": "string", "maxLength": 200, "description": 'without "#", e.g. "sourdough"'},
            "mode": {"type": "string", "enum": ["hybrid", "semantic", "keyword"], "default": "hybrid"},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "results": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"},
                "heading": {"type": "string", "description": '"" for the note\'s opening: read the note whole'},
                "section": {"type": "string", "description": "the note's title and the headings above"},
                "score": {"type": "number"},
                "snippet": {"type": "string"},
            }, "required": ["path", "heading", "section", "score", "snippet"]}},
            "indexed": {"type": "integer", "description": "only while the index is first built: the notes "
                                                          "searched, of `total`; ask again later for all"},
            "total": {"type": "integer", "description": "only while the index is first built: the vault's notes"},
        },
        "required": ["results"],
    },
    run=search_vault,
    annotations=READ_ONLY,
)


def reindex(context: Context, arguments: dict) -> dict:
    def progress(done: int, total: int) -> None:
        if done == total or done % max(1, total // 20) == 0:  # every note below 40, else about 20 reports
            context.progress(done, total, f"{done} of {total} notes embedded")

    index = context.index.rebuild(progress)
    return {"notes": len(index.note_paths()), "chunks": len(index)}


REINDEX = Tool(
    name="reindex",
    title="Rebuild the search index",
    description=(
        "Rebuild the search index of the vault from scratch: every note is read and embedded "
        "again. Only needed when search misses notes that exist; it can take minutes on a large "
        "vault. Searches keep working on the old index until the new one is ready."
    ),
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    output_schema={
        "type": "object",
        "properties": {"notes": {"type": "integer"}, "chunks": {"type": "integer"}},
        "required": ["notes", "chunks"],
    },
    run=reindex,
    # It changes no note, but it is no look either: it embeds every note again, minutes of
    # work on a large vault, and writes a new index, so a client should ask before it runs.
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
)

# region get-backlinks
def get_backlinks(context: Context, arguments: dict) -> dict:
    path, _ = context.vault.locate(arguments["path"])  # judged like any path from a model
    graph = context.index.link_graph()
    backlinks = [backlink_data(backlink) for backlink in graph.backlinks(path)]
    missing = graph.unresolved(path)
    result = {"path": path, "backlinks": backlinks, "unresolved": sorted({r.link.target for r in missing})}
    alias_of = {r.link.target: r.alias_of for r in missing if r.alias_of}
    if alias_of:
        result["aliasOf"] = alias_of
    return result


def backlink_data(backlink) -> dict:
    data = {"path": backlink.source, "line": backlink.line, "context": backlink.context}
    if backlink.link.block:  # [[Note#^id]] points at one block of the note
        data["block"] = backlink.link.block
    return data
# endregion get-backlinks


GET_BACKLINKS = Tool(
    name="get_backlinks",
    title="Notes that link here",
    description=(
        "List the notes of the user's Obsidian vault that link to one note, each with the line "
        "that links and that line's text, resolved as Obsidian resolves links (an exact path, then "
        "a note of that name in the linking note's folder, then the shortest path); `block` names "
        "the block a link points at ([[Note#^id]]), for get_note's `heading` as \"^id\". `unresolved` "
        "lists the note's own links that lead to no note; `aliasOf` names, for those that are "
        "another note's alias, that note: Obsidian resolves no bare alias, [[Note|alias]] is the "
        "link to write. `path` as list_notes gives it."
    ),
    input_schema={
        "type": "object",
        "properties": {"path": {"type": "string", "minLength": 1, "maxLength": 1024}},
        "required": ["path"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "backlinks": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}, "line": {"type": "integer"}, "context": {"type": "string"},
                "block": {"type": "string", "description": "the block id the link points at, without ^"}},
                "required": ["path", "line", "context"]}},
            "unresolved": {"type": "array", "items": {"type": "string"}},
            "aliasOf": {"type": "object", "additionalProperties": {"type": "string"},
                        "description": "unresolved target -> the note that has it as an alias"},
        },
        "required": ["path", "backlinks", "unresolved"],
    },
    run=get_backlinks,
    annotations=READ_ONLY,
)


def related_notes(context: Context, arguments: dict) -> dict:
    path, _ = context.vault.locate(arguments["path"])
    graph = context.index.link_graph()
    context.index.current()  # waits briefly for a first build, so that similarity counts too
    found = related.related_notes(graph, context.index, path, arguments["limit"])
    return {"path": path, "related": [
        {"path": note.path, "score": round(note.score, 3), "reasons": note.reasons} for note in found
    ]}


RELATED_NOTES = Tool(
    name="related_notes",
    title="Notes related to a note",
    description=(
        "Find what else in the user's Obsidian vault belongs with one note: notes it links to, "
        "notes that link to it, notes two links away, and notes whose content is similar. Each "
        "comes with the reasons it is related, best first."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 1024},
            "limit": {"type": "integer", "minimum": 1, "maximum": 30, "default": 10},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "related": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}, "score": {"type": "number"},
                "reasons": {"type": "array", "items": {"type": "string"}}},
                "required": ["path", "score", "reasons"]}},
        },
        "required": ["path", "related"],
    },
    run=related_notes,
    annotations=READ_ONLY,
)


def list_tags(context: Context, arguments: dict) -> dict:
    counts = context.index.link_graph().tag_counts()
    return {"tags": [{"tag": tag, "notes": counts[tag]} for tag in sorted(counts)]}


LIST_TAGS = Tool(
    name="list_tags",
    title="List the tags",
    description=(
        "List every tag of the user's Obsidian vault (in the text or the tags property), in lower "
        "case as tags compare, sorted, each with the number of notes that have it. A note tagged "
        '"work/tasks" counts for "work" too. Pass a tag to search_vault\'s `tag` to find its notes.'
    ),
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    output_schema={
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "object", "properties": {
                "tag": {"type": "string", "description": 'without "#", e.g. "ferment/lacto"'},
                "notes": {"type": "integer", "description": "how many notes have it or a tag under it"}},
                "required": ["tag", "notes"]}},
        },
        "required": ["tags"],
    },
    run=list_tags,
    annotations=READ_ONLY,
)


# region create-note
def create_note(context: Context, arguments: dict) -> dict:
    path = inbox.create_note(context.vault, context.inbox, arguments["title"], arguments["content"], arguments.get("tags"))
    made = Change(path, None, version_of(context.vault.read_bytes(path)[1]))
    return {"path": path, "uri": path_to_uri(path)} | journaled(context, Entry("create_note", [made]))


CREATE_NOTE = Tool(
    name="create_note",
    title="Save a new note",
    description=(
        "Save a new note in the inbox folder of the user's Obsidian vault, and nowhere else. "
        "Give a `title` (it becomes the file name; characters a file name cannot hold are left "
        "out), the Markdown `content`, and optional `tags` (without #). It never changes or "
        "replaces an existing note: if the title is taken, choose another title. Search finds "
        "the new note once the server has indexed it."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 200},
            "content": {"type": "string", "maxLength": 100_000},
            "tags": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 100}},
        },
        "required": ["title", "content"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {"path": {"type": "string"}, "uri": {"type": "string"}, "editId": {"type": "string"}},
        "required": ["path", "uri"],
    },
    run=create_note,
    # It adds a file and never changes one; calling it twice does not write twice (the
    # second call finds the title taken).
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
)
# endregion create-note

# region edit-note
def edit_note(context: Context, arguments: dict) -> dict:
    operation, heading, version = arguments["operation"], arguments.get("heading"), arguments.get("version")
    if operation in ("replace_section", "find_replace") and version is None:
        raise EditError(f"{operation} needs `version`, as get_note gave it: read the note first, so that "
                        "nothing written since is replaced unseen")
    if operation == "replace_section" and heading is None:
        raise EditError("replace_section needs `heading`: the heading whose section to replace, or a block's ^id")
    path, _ = context.vault.locate(arguments["path"])
    context.policy.check(context.vault, path)
    written = change_note(context.vault, path, version, lambda text: edit_text(
        text, operation, arguments["content"], heading, arguments.get("find")))
    return written_data(context, "edit_note", written)
# endregion edit-note


# region journaled
def written_data(context: Context, tool: str, written) -> dict:
    """The answer of a write: the note's new version, and the id undo_edit takes."""
    entry = Entry(tool, [Change(written.path, written.before, written.version)])
    links_follow(context, [written.path])
    return {"path": written.path, "version": written.version,
            "changed": written.after != written.before} | journaled(context, entry)


def journaled(context: Context, entry: Entry) -> dict:
    return {"editId": context.journal.record(entry)} if context.journal else {}
# endregion journaled


EDIT_NOTE = Tool(
    name="edit_note",
    title="Edit a note",
    description=(
        "Change part of an existing note of the user's Obsidian vault, leaving every other byte as it "
        "was. Read the note with get_note first and pass its `version`: if the note has changed since, "
        "nothing is written and the answer gives the current version, so read it again. `operation`: "
        '"append" or "prepend" adds `content` at the end or start of the note (after its properties), '
        'or of a section when `heading` names one as get_note takes it ("Shaping", "Day 2#Timing", or '
        'a block "^id"); "replace_section" replaces what is under `heading` (subsections included), '
        'keeping the heading line; "find_replace" replaces the one exact occurrence of `find` with '
        "`content`, and refuses when `find` occurs 0 or several times. `version` is required for "
        "replace_section and find_replace. The answer has the new `version`."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 1024,
                     "description": 'The note\'s path, as get_note gave it, e.g. "Bread/Focaccia.md".'},
            "operation": {"type": "string", "enum": list(OPERATIONS)},
            "content": {"type": "string", "maxLength": 100_000, "description": "Markdown to add or put in place"},
            "heading": {"type": "string", "minLength": 1, "maxLength": 1024,
                        "description": 'A heading as get_note\'s outline shows it, or a block "^id".'},
            "find": {"type": "string", "minLength": 1, "maxLength": 100_000,
                     "description": "for find_replace: the exact text to replace, as get_note's text shows it"},
            "version": {"type": "string", "minLength": 1, "maxLength": 64, "description": "the version get_note gave"},
        },
        "required": ["path", "operation", "content"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "version": {"type": "string", "description": "the note's version now; pass it to the next edit"},
            "changed": {"type": "boolean", "description": "false when the edit left the bytes as they were"},
            "editId": {"type": "string", "description": "pass it to undo_edit to put the note back"},
        },
        "required": ["path", "version", "changed"],
    },
    run=edit_note,
    # It changes a note, and the same append made twice adds the text twice.
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
)


def set_properties(context: Context, arguments: dict) -> dict:
    changes = arguments["properties"]
    if not changes:
        raise EditError("properties is empty: give each property to set, or null to remove it")
    path, _ = context.vault.locate(arguments["path"])
    context.policy.check(context.vault, path)
    written = change_note(context.vault, path, arguments.get("version"), lambda text: set_in_text(text, changes))
    return written_data(context, "set_properties", written)


SET_PROPERTIES = Tool(
    name="set_properties",
    title="Set a note's properties",
    description=(
        "Set or remove properties (frontmatter) of a note of the user's Obsidian vault: `properties` maps "
        'each name to its new value (text, number, true/false, or a list, e.g. {"status": "done", '
        '"tags": ["bread", "rye"]}), or to null to remove it. A note without properties gets them. '
        "Every other property, comment and line of the frontmatter stays exactly as it was. Pass the "
        "`version` get_note gave, so that nothing changed since is overwritten."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 1024},
            "properties": {"type": "object", "additionalProperties": True,
                           "description": "name -> new value (text, number, true/false, a list of those), "
                                          "or null to remove the property"},
            "version": {"type": "string", "minLength": 1, "maxLength": 64, "description": "the version get_note gave"},
        },
        "required": ["path", "properties"],
        "additionalProperties": False,
    },
    output_schema=EDIT_NOTE.output_schema,
    run=set_properties,
    # Setting the same values twice leaves the note as the first call did.
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
)


# region delete-note
def delete_note(context: Context, arguments: dict) -> dict:
    path, real = context.vault.locate(arguments["path"])
    context.policy.check(context.vault, path)
    with note_lock(real):
        _, data = context.vault.read_bytes(path)
        check_version(path, data, arguments["version"])
        trashed = move_to_trash(context.vault, path)
    links_follow(context, [path])
    entry = Entry("delete_note", moves=[(path, trashed, version_of(data))])
    return {"path": path, "trash": trashed} | journaled(context, entry)
# endregion delete-note


DELETE_NOTE = Tool(
    name="delete_note",
    title="Move a note to the trash",
    description=(
        "Move a note of the user's Obsidian vault to the vault's trash (.trash), where Obsidian shows it "
        "and the user can restore it; nothing is erased. Pass the `version` get_note gave: a note changed "
        "since is not deleted. undo_edit with the answer's `editId` puts it back."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 1024},
            "version": {"type": "string", "minLength": 1, "maxLength": 64, "description": "the version get_note gave"},
        },
        "required": ["path", "version"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {"path": {"type": "string"}, "trash": {"type": "string", "description": "where it is now"},
                       "editId": {"type": "string"}},
        "required": ["path", "trash"],
    },
    run=delete_note,
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
)


def undo_edit(context: Context, arguments: dict) -> dict:
    if context.journal is None:
        raise VaultError("This server keeps no journal of its writes; nothing can be undone")
    restored = undo(context.vault, context.policy, context.journal, arguments["editId"])
    links_follow(context, restored)
    return {"editId": arguments["editId"], "restored": restored}


def links_follow(context: Context, paths: list[str]) -> None:
    """This step has no watcher, so a write tells the link graph of each note it changed:
    backlinks, and the next move's plan, see it at once. (Search sees it after a reindex.)"""
    try:
        graph = context.index.link_graph()
    except NotReady:
        return  # still being built: it reads each note as it is now
    for path in paths:
        if not path.startswith(".trash/"):  # a note in the trash is no note of the vault
            graph.update_note(path)


UNDO_EDIT = Tool(
    name="undo_edit",
    title="Undo a write",
    description=(
        "Undo one write this server made to the user's Obsidian vault (create_note, edit_note, "
        "set_properties, delete_note...), given the `editId` its answer carried: every note it changed "
        "gets back its exact bytes, a deleted note comes back, a created one goes to the trash. Refused, "
        "with nothing changed, when one of those notes has changed since; the answer names it."
    ),
    input_schema={
        "type": "object",
        "properties": {"editId": {"type": "string", "minLength": 1, "maxLength": 64}},
        "required": ["editId"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {"editId": {"type": "string"},
                       "restored": {"type": "array", "items": {"type": "string"}, "description": "the notes put back"}},
        "required": ["editId", "restored"],
    },
    run=undo_edit,
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
)


def move_note(context: Context, arguments: dict) -> dict:
    entry, changed = note_moves.move_note(context.vault, context.policy, context.index.link_graph(),
                                          arguments["path"], arguments["to"], arguments["version"])
    source, target, version = entry.moves[0]
    return {"path": source, "to": target, "version": version, "changed": changed} | journaled(context, entry)


MOVE_NOTE = Tool(
    name="move_note",
    title="Move or rename a note",
    description=(
        "Move or rename a note of the user's Obsidian vault (`to`: its new path, e.g. "
        '"Bread/Archive/Old focaccia.md"), and rewrite every link to it in other notes, as Obsidian '
        "does when it updates links: headings, blocks and display text kept, each link written the "
        "way Obsidian would. Pass the `version` get_note gave. `changed` lists the notes whose links "
        "were rewritten; undo_edit with the answer's `editId` puts the note and every link back."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 1024},
            "to": {"type": "string", "minLength": 1, "maxLength": 1024, "description": "the note's new path"},
            "version": {"type": "string", "minLength": 1, "maxLength": 64, "description": "the version get_note gave"},
        },
        "required": ["path", "to", "version"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string"}, "to": {"type": "string"},
            "version": {"type": "string", "description": "the note's version at its new path"},
            "changed": {"type": "array", "items": {"type": "string"}, "description": "notes whose links changed"},
            "editId": {"type": "string"},
        },
        "required": ["path", "to", "version", "changed"],
    },
    run=move_note,
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
)


# region daily-note-tool
def daily_note(context: Context, arguments: dict) -> dict:
    """The day's note, named as Obsidian's settings say; an append obeys the write policy
    and is journaled like any write, so undo_edit can take it back."""
    result, before = daily_notes.daily_note(context.vault, arguments, lambda path: context.policy.check(context.vault, path))
    if arguments.get("append") is None or not result["exists"]:
        return result
    _, data = context.vault.read_bytes(result["path"])
    links_follow(context, [result["path"]])
    return result | journaled(context, Entry("daily_note", [Change(result["path"], before, version_of(data))]))
# endregion daily-note-tool


DAILY_NOTE = Tool(
    name="daily_note",
    title="The daily note",
    description=(
        "Read the daily note of the user's Obsidian vault for a day (`date`, e.g. \"2026-04-05\"; "
        "today in the user's time zone when left out), found where Obsidian's Daily notes (or "
        "Periodic Notes) settings put it. `exists` says whether it is there. Give `append` to add "
        "Markdown at its end, on lines of its own (\"add this to today's note\"): a missing note is "
        "first created from the user's daily note template. Nothing else in the note is changed."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "date": {"type": "string", "maxLength": 32, "description": 'ISO 8601, e.g. "2026-04-05".'},
            "append": {"type": "string", "minLength": 1, "maxLength": 100_000,
                       "description": "Markdown to add at the end of the note."},
        },
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "date": {"type": "string"},
            "path": {"type": "string", "description": "where the daily note of that day is, or would be"},
            "uri": {"type": "string"},
            "exists": {"type": "boolean"},
            "created": {"type": "boolean", "description": "true when append created the note"},
            "text": {"type": "string", "description": "the note as it is now, properties included"},
            "editId": {"type": "string", "description": "after an append: pass it to undo_edit to take it back"},
        },
        "required": ["date", "path", "uri", "exists"],
    },
    run=daily_note,
    # It adds text and never removes any; twice is two appends.
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
)


# The tools that change a note; a write policy may take these away, and create_note.
EDITS = [EDIT_NOTE, SET_PROPERTIES, MOVE_NOTE, DELETE_NOTE, UNDO_EDIT]
WRITES = {"create_note"} | {tool.name for tool in EDITS}


TOOLS = {tool.name: tool for tool in [LIST_NOTES, GET_NOTE, SEARCH_VAULT, GET_BACKLINKS, RELATED_NOTES,
                                      LIST_TAGS, CREATE_NOTE, DAILY_NOTE, REINDEX, *EDITS]}


def offered_tools(policy: WritePolicy, inbox_folder: str) -> dict[str, Tool]:
    """The tools this server lists and runs: none that writes where the policy forbids it."""
    def offered(name: str) -> bool:
        if name not in WRITES:
            return True
        if name == "create_note":
            return policy.allows(inbox_folder.strip("/") + "/" + "a note.md")
        return not policy.read_only
    return {name: tool for name, tool in TOOLS.items() if offered(name)}
