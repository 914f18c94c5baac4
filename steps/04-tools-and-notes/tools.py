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
from dataclasses import dataclass
from typing import Callable

import long_notes
import note_queries
from schema import check_schema, defaults, validate
from vault import Vault, VaultError

log = logging.getLogger("tools")

# These tools only read, and reading twice gives the same answer: a client may run
# them without asking the user first. They touch nothing outside the vault.
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


@dataclass
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict
    output_schema: dict
    run: Callable[[Vault, dict], dict]  # (vault, arguments) -> structured result
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
def call_tool(tool: Tool, arguments, vault: Vault) -> dict:
    """Validate, run, and wrap the result; whatever goes wrong becomes a result the model can read."""
    if arguments is None:
        arguments = {}  # a client may leave arguments out for a tool that needs none
    problems = validate(tool.input_schema, arguments)
    if problems:
        return error_result(f"Invalid arguments for {tool.name}: " + "; ".join(problems))
    try:
        data = tool.run(vault, defaults(tool.input_schema) | arguments)
    except VaultError as error:
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


def list_notes(vault: Vault, arguments: dict) -> dict:
    return note_queries.list_notes(vault, arguments)  # sorted, filtered by time


LIST_NOTES = Tool(
    name="list_notes",
    title="List notes",
    description=(
        "List the notes (Markdown files) of the user's Obsidian vault, one page at a time: `notes` "
        "gives their paths, `entries` each one's path, title and `modified` time (ISO 8601, UTC). "
        "Give `folder` to list only the notes under that folder. `sort`: \"path\" (default), "
        "\"modified\" (the note changed last first) or \"created\" (newest first). "
        "`modifiedAfter` / `modifiedBefore` (ISO 8601, e.g. \"2026-04-05\"; without a zone, the "
        "server's local time) keep the notes changed in that time. When the result has "
        "`nextCursor`, pass it as `cursor`, with the same arguments, to get the next page. "
        "Read a note with get_note."
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
def get_note(vault: Vault, arguments: dict) -> dict:
    path, text = vault.read_note(arguments["path"])
    result = {"path": path, "text": text}
    long_notes.read_in_parts(result, arguments["maxChars"], arguments["offset"])  # a part a client keeps
    return result


GET_NOTE = Tool(
    name="get_note",
    title="Read a note",
    description=(
        "Read one note of the user's Obsidian vault: its Markdown text. `path` is relative to "
        'the vault, e.g. "Bread/Focaccia.md" (".md" may be left out), as list_notes gives it. '
        "A long text comes in parts of at most `maxChars` characters: then `truncated` is true, "
        "and passing `nextOffset` as `offset` gives the next part. A path that leaves the vault "
        "is refused."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 1024,
                     "description": 'The note\'s path in the vault, e.g. "Bread/Focaccia.md".'},
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
            "text": {"type": "string"},
            "truncated": {"type": "boolean", "description": "true when more text follows this part"},
            "nextOffset": {"type": "integer", "description": "the offset of the next part"},
            "totalChars": {"type": "integer", "description": "the length of the whole text, when read in parts"},
        },
        "required": ["path", "text"],
    },
    run=get_note,
    annotations=READ_ONLY,
)
# endregion get-note

TOOLS = {tool.name: tool for tool in [LIST_NOTES, GET_NOTE]}
