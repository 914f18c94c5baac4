"""resource_link content blocks: the notes a tool answers with, as resources a client can open.

A tool's answer names notes by their paths, in text a model reads. A client cannot
tell a path in JSON from any other string; a resource_link block beside the text says
"this is a resource of this server, at this URI", so the client can show it, open it
with resources/read, or attach it. create_note links the note it made, search_vault
each note it found, daily_note the day's note once it exists.

Decisions:
- One block per note, in the order of the answer, each note once.
- resource_link came with protocol revision 2025-06-18: a session that agreed on an
  older one gets the text alone, since its client may refuse a block it does not know.
"""
from resources import MIME_TYPE, title_of
from vault import path_to_uri

LINKS_SINCE = "2025-06-18"  # revisions are dates: they compare as text


# region resource-links
def notes_named(tool: str, data: dict) -> list[str]:
    """The notes a tool's structured answer is about, as vault paths."""
    if tool == "create_note":
        return [data["path"]]
    if tool == "search_vault":
        return [hit["path"] for hit in data["results"]]
    if tool == "daily_note" and data["exists"]:
        return [data["path"]]
    return []


def link_blocks(tool: str, data: dict) -> list[dict]:
    return [{"type": "resource_link", "uri": path_to_uri(path), "name": path, "title": title_of(path),
             "mimeType": MIME_TYPE} for path in dict.fromkeys(notes_named(tool, data))]


def for_version(version: str | None, result: dict) -> dict:
    """A tools/call result as a client of that revision understands it."""
    if version is None or version >= LINKS_SINCE:  # None: the stateless era, newer than any
        return result
    return result | {"content": [block for block in result["content"] if block["type"] != "resource_link"]}
# endregion resource-links
