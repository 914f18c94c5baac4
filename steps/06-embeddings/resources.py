"""The vault's notes as MCP resources: listed a page at a time, read by URI, and
described by one URI template.

A tool is called by the model when it decides to; a resource is chosen by the
client or the user, to put a note in front of the model. The same notes serve
both, through the same Vault, so a resource URI is judged exactly like a path a
model sends. URIs look like vault:///Bread/Focaccia.md (vault.py says why).
"""
from vault import Vault, page, path_to_uri, uri_to_path

# region resources
PAGE_SIZE = 100  # resources per page of resources/list
MIME_TYPE = "text/markdown"

TEMPLATE = {
    "uriTemplate": "vault:///{+path}",  # RFC 6570: {+path} keeps the slashes of Folder/Note.md
    "name": "note",
    "title": "A note of the vault",
    "description": "A Markdown note, by its path in the vault, e.g. vault:///Bread/Focaccia.md",
    "mimeType": MIME_TYPE,
}


def list_resources(vault: Vault, cursor: str | None) -> dict:
    names, next_cursor = page(vault.list_notes(), cursor, PAGE_SIZE)
    resources = [
        {"uri": path_to_uri(name), "name": name, "title": title_of(name), "mimeType": MIME_TYPE}
        for name in names
    ]
    result = {"resources": resources}
    if next_cursor:
        result["nextCursor"] = next_cursor
    return result


def read_resource(vault: Vault, uri: str) -> dict:
    _, text = vault.read_note(uri_to_path(uri))
    # The URI as the client asked for it, even when the note was found under another
    # spelling (.md left out, another Unicode form): that is the URI it will look for.
    return {"contents": [{"uri": uri, "mimeType": MIME_TYPE, "text": text}]}
# endregion resources


def title_of(path: str) -> str:
    """What Obsidian shows as a note's name: the file name without .md."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")
