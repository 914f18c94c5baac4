"""list_notes links each note it lists as a resource the client can open."""
import json

from probe import expect, ok, shown


def links_of(result: dict, what: str) -> tuple[list[str], list[dict]]:
    """The notes a list_notes result names, and the content blocks after its text twin."""
    notes = result.get("structuredContent", {}).get("notes")
    content = result.get("content") or [{}]
    expect(isinstance(notes, list) and content[0].get("type") == "text",
           f"{what} should still carry structuredContent with notes, and its text block first: {shown(result)}")
    try:
        twin = json.loads(content[0].get("text", ""))
    except ValueError:
        twin = None
    expect(twin == result.get("structuredContent"),
           f"{what}: the first block is the text twin of structuredContent, and stays so; it is {shown(content[0])}")
    return notes, content[1:]


def check(server):
    server.handshake()
    listed = server.result("resources/list")
    uris = {resource.get("name"): resource.get("uri") for resource in listed.get("resources", [])}

    result = server.result("tools/call", {"name": "list_notes", "arguments": {"folder": "Inbox"}})
    notes, blocks = links_of(result, "list_notes for Inbox")
    expect([block.get("type") for block in blocks] == ["resource_link"] * len(notes),
           f"after its text block, list_notes should add one resource_link block per note it lists ({len(notes)} "
           f"here), in call_tool (tools.py); its content is {shown(result.get('content'))}")
    for note, block in zip(notes, blocks):
        expect(block.get("uri") == uris.get(note) and block.get("name") == note,
               f"the link for {note!r} should have uri {uris.get(note)!r}, as resources/list gives it (path_to_uri in "
               f"vault.py makes it), and name {note!r}; it is {shown(block)}")
        expect(block.get("mimeType") == "text/markdown",
               f"a note's link should say mimeType \"text/markdown\", as its resource does; it is {shown(block)}")
        read = server.call("resources/read", {"uri": block.get("uri")})
        expect((read.get("result", {}).get("contents") or [{}])[0].get("uri") == block.get("uri"),
               f"resources/read of the link {block.get('uri')!r} should give that note; it answered {shown(read)}")
    ok("list_notes for Inbox links both notes, and resources/read opens each link")

    result = server.result("tools/call", {"name": "list_notes", "arguments": {"folder": "Bread", "limit": 3}})
    notes, blocks = links_of(result, "list_notes for Bread, 3 at a time")
    expect(len(notes) == 3 and [block.get("name") for block in blocks] == notes,
           f"a page of 3 notes should carry exactly its 3 links; it carries {shown(blocks)}")
    ok("a page links the notes of that page only")

    reply = server.stateless("tools/call", {"name": "list_notes", "arguments": {"folder": "Inbox"}})
    result = reply.json().get("result", {})
    notes, blocks = links_of(result, "list_notes in 2026-07-28")
    expect([block.get("uri") for block in blocks] == [uris.get(note) for note in notes],
           f"in 2026-07-28, list_notes should link its notes the same way; it answered {shown(result)}")
    answer = server.call("tools/call", {"name": "get_note", "arguments": {"path": "Inbox/Try tangzhong"}})
    expect(answer.get("result", {}).get("isError") is False,
           f"get_note should still read a note; it answered {shown(answer)}")
    ok("the links are there in 2026-07-28 too, and get_note still reads")
