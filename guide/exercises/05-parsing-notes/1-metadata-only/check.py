"""get_note with `include_text: false` answers the note's metadata without its text."""
import json

from probe import expect, ok, shown, text_of, tool_error

NOTE = "Bread/Focaccia"


def get_note(server, **arguments) -> dict:
    answer = server.call("tools/call", {"name": "get_note", "arguments": {"path": NOTE, **arguments}})
    expect("result" in answer and answer["result"].get("isError") is False,
           f"get_note {shown(arguments | {'path': NOTE})} failed: {shown(answer.get('result') or answer.get('error'))}")
    return answer["result"]


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    declared = tools.get("get_note", {})
    option = declared.get("inputSchema", {}).get("properties", {}).get("include_text", {})
    expect(option.get("type") == "boolean",
           f"get_note's inputSchema should declare 'include_text', a boolean (in GET_NOTE, tools.py); its "
           f"properties are {shown(sorted(declared.get('inputSchema', {}).get('properties', {})))}")
    required = declared.get("outputSchema", {}).get("required", [])
    expect("text" not in required,
           f"get_note's outputSchema still requires 'text', so an answer without it would not fit the schema "
           f"the client was given: take it out of 'required'. It requires {shown(required)}")
    ok("tools/list declares include_text, and the output schema no longer requires text")

    result = get_note(server, include_text=False)
    data = result.get("structuredContent", {})
    expect("text" not in data,
           f"get_note with include_text: false still sends the text ({len(str(data.get('text')))} characters); "
           f"leave it out of the result in get_note (tools.py)")
    expected_fields = ("path", "title", "frontmatter", "tags", "aliases", "links", "outline")
    expect(all(field in data for field in expected_fields),
           f"without its text the answer still carries {', '.join(expected_fields)}; it has {shown(sorted(data))}")
    expect(data.get("tags") == ["bread", "sourdough", "weekend", "\U0001f35e"] and len(data.get("outline", [])) == 3,
           f"the metadata should be the same as before: tags {shown(data.get('tags'))}, "
           f"outline {shown(data.get('outline'))}")
    try:
        twin = json.loads(text_of(result, "get_note"))
    except ValueError:
        twin = None
    expect(twin == data, f"the text block should carry the same data as structuredContent; it says {shown(twin)}")
    ok("include_text: false gives the properties, tags, links and outline, without the text, in both forms")

    for arguments in ({}, {"include_text": True}):
        data = get_note(server, **arguments).get("structuredContent", {})
        expect(str(data.get("text", "")).startswith("# Focaccia"),
               f"get_note {shown(arguments | {'path': NOTE})} should still give the text; it gave {shown(data)}")
    ok("without include_text, or with true, the text is there as before")

    tool_error(server.call("tools/call", {"name": "get_note", "arguments": {"path": NOTE, "include_text": "no"}}),
               'get_note with include_text: "no"', "include_text")
    ok("include_text must be a boolean, and the schema says so")
