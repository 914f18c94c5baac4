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
from dataclasses import dataclass
from typing import Callable

from markdown import Link
from notes import parse_note
from resources import title_of
import long_notes
import note_queries
from schema import check_schema, defaults, validate
from vault import Vault, VaultError, shown
from vault_index import NotReady, VaultIndex

log = logging.getLogger("tools")

# These tools only read, and reading twice gives the same answer: a client may run
# them without asking the user first. They touch nothing outside the vault.
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


@dataclass
class Context:
    """What a tool may use: the vault, its search index, and a way to tell the
    client how far a long call has got (progress(done, total, message))."""

    vault: Vault
    index: VaultIndex
    progress: Callable = lambda done, total=None, message=None: None


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
    return {"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": False}


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
    path, text = context.vault.read_note(arguments["path"])
    note = parse_note(title_of(path), text)
    result = {
        "path": path,
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
    long_notes.read_in_parts(result, arguments["maxChars"], arguments["offset"])  # a part a client keeps
    return result


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
        'out), as list_notes gives it. Give `heading` (e.g. "Shaping", or "Day 2#Timing" for a '
        "heading under another) to get only that section's text, or a block's id as `blocks` "
        'lists it, after "^" (e.g. "^peak-signs"), to get only that block. A long text comes in '
        "parts of at most `maxChars` characters: then `truncated` is true, and passing `nextOffset` "
        "as `offset` gives the next part (or read one section by its `heading`, from the outline). "
        "A path that leaves the vault is refused."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 1024,
                     "description": 'The note\'s path in the vault, e.g. "Bread/Focaccia.md".'},
            "heading": {"type": "string", "minLength": 1, "maxLength": 1024,
                        "description": 'Only the section under this heading, as the outline shows it, '
                                       'or only the block "^id", as blocks lists it.'},
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
            "path": {"type": "string"},
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
            "text": {"type": "string"},
            "truncated": {"type": "boolean", "description": "true when more text follows this part"},
            "nextOffset": {"type": "integer", "description": "the offset of the next part"},
            "totalChars": {"type": "integer", "description": "the length of the whole text, when read in parts"},
        },
        "required": ["path", "title", "frontmatter", "tags", "aliases", "links", "outline", "blocks", "text"],
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


# region reindex
def reindex(context: Context, arguments: dict) -> dict:
    def progress(done: int, total: int) -> None:
        if done == total or done % max(1, total // 20) == 0:  # every note below 40, else about 20 reports
            context.progress(done, total, f"{done} of {total} notes embedded")

    index = context.index.rebuild(progress)
    return {"notes": len(index.note_paths()), "chunks": len(index)}
# endregion reindex


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

TOOLS = {tool.name: tool for tool in [LIST_NOTES, GET_NOTE, SEARCH_VAULT, REINDEX]}
