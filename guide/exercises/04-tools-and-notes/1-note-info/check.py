"""A tool `note_info`: a note's size and last change, declared with its own schemas."""
import json
from datetime import datetime

from manifest import SAMPLE_VAULT
from probe import expect, ok, shown, text_of, tool_error

NOTE = "Bread/Focaccia.md"


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    expect("note_info" in tools, "tools/list offers no tool named 'note_info': declare a Tool and add it to TOOLS in tools.py")
    declared = tools["note_info"]
    schema = declared.get("inputSchema", {})
    expect(schema.get("properties", {}).get("path", {}).get("type") == "string" and "path" in schema.get("required", []),
           f"note_info's inputSchema should require 'path', a string; it says {shown(schema)}")
    output = declared.get("outputSchema", {}).get("properties", {})
    expect(output.get("size", {}).get("type") == "integer" and output.get("modified", {}).get("type") == "string",
           f"note_info's outputSchema should declare 'size' (an integer) and 'modified' (a string); it says "
           f"{shown(declared.get('outputSchema'))}")
    expect(declared.get("annotations", {}).get("readOnlyHint") is True,
           f"note_info only reads: its annotations should say readOnlyHint: true; they say {shown(declared.get('annotations'))}")
    ok("tools/list offers note_info, with input and output schemas and a read-only hint")

    answer = server.call("tools/call", {"name": "note_info", "arguments": {"path": "Bread/Focaccia"}})
    expect("result" in answer and answer["result"].get("isError") is False,
           f"note_info for \"Bread/Focaccia\" failed: {shown(answer.get('result') or answer.get('error'))}")
    data = answer["result"].get("structuredContent")
    expect(isinstance(data, dict), f"note_info's result has no structuredContent: {shown(answer['result'])}")
    real = (SAMPLE_VAULT / NOTE).stat()
    expect(data.get("path") == NOTE, f"note_info should give the path as found, {NOTE!r}; it gave {shown(data.get('path'))}")
    expect(data.get("size") == real.st_size,
           f"{NOTE} has {real.st_size} bytes on disk; note_info says size {shown(data.get('size'))}")
    try:
        modified = datetime.fromisoformat(data.get("modified"))
    except (TypeError, ValueError):
        modified = None
    expect(modified is not None and modified.tzinfo is not None,
           f"'modified' should be an ISO 8601 time with its time zone, like \"2026-03-01T09:30:00+00:00\"; "
           f"it is {shown(data.get('modified'))}")
    expect(abs(modified.timestamp() - real.st_mtime) < 2,
           f"{NOTE} last changed at {datetime.fromtimestamp(real.st_mtime).astimezone().isoformat(timespec='seconds')}; "
           f"note_info says {data.get('modified')}")
    twin = text_of(answer["result"], "note_info")
    try:
        same = json.loads(twin) == data
    except ValueError:
        same = False
    expect(same, f"the text block should carry the same data as structuredContent, as JSON; it says {twin!r}")
    ok("note_info gives the path, size and last change of Bread/Focaccia, in structuredContent and as text")

    for path in ("../Home.md", "/etc/passwd", ".obsidian/app.json"):
        answer = server.call("tools/call", {"name": "note_info", "arguments": {"path": path}})
        expect("result" in answer and answer["result"].get("isError") is True,
               f"note_info for {path!r} should be refused with isError: true, as get_note refuses it: ask the "
               f"Vault (vault.locate), never open the path yourself. It answered {shown(answer.get('result') or answer.get('error'))}")
    ok("paths outside the vault, absolute or hidden are refused as tool errors")
    tool_error(server.call("tools/call", {"name": "note_info", "arguments": {}}), "note_info without arguments", "path")
    ok("a call without a path is a tool error that names it")

    reply = server.stateless("tools/call", {"name": "note_info", "arguments": {"path": NOTE}})
    result = reply.json().get("result", {})
    expect(reply.status == 200 and result.get("structuredContent", {}).get("size") == real.st_size,
           f"in 2026-07-28, note_info should work the same; it got HTTP {reply.status} and {shown(reply.json())}")
    ok("note_info works in the 2026-07-28 era too")
