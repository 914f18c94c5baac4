"""A tool `unresolved_links`: every link in the vault that leads to no note, and how many."""
import json

from probe import expect, ok, shown, text_of

# The two links of the sample vault that match no note; attachments are not among them.
EXPECTED = [
    {"path": "Inbox/Try tangzhong.md", "line": 12, "target": "Pizza dough"},
    {"path": "Inbox/Try tangzhong.md", "line": 12, "target": "Tangzhong"},
]
ATTACHMENTS = ("hydration-table.csv", "crumb-chart.svg")
FIELDS = ("path", "line", "target")


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    expect("unresolved_links" in tools,
           "tools/list offers no tool named 'unresolved_links': declare a Tool beside GET_BACKLINKS and add it to "
           "TOOLS in tools.py")
    declared = tools["unresolved_links"]
    expect(declared.get("annotations", {}).get("readOnlyHint") is True,
           f"unresolved_links only reads: its annotations should say readOnlyHint: true; they say "
           f"{shown(declared.get('annotations'))}")
    output = declared.get("outputSchema", {}).get("properties", {})
    expect(output.get("count", {}).get("type") == "integer" and output.get("links", {}).get("type") == "array",
           f"unresolved_links' outputSchema should declare 'count' (an integer) and 'links' (an array); it declares "
           f"{shown(declared.get('outputSchema'))}")
    ok("tools/list offers unresolved_links, read-only, with count and links in its output schema")

    answer = server.call("tools/call", {"name": "unresolved_links", "arguments": {}})
    result = answer.get("result", {})
    expect(result.get("isError") is False, f"unresolved_links failed: {shown(result or answer.get('error'))}")
    data = result.get("structuredContent", {})
    links = data.get("links")
    expect(isinstance(links, list) and all(isinstance(link, dict) for link in links),
           f"'links' should be a list of objects, each with path, line and target; it is {shown(links)}")
    required = output["links"].get("items", {}).get("required", [])
    for link in links:  # a field left out is named, not blamed on which links were found
        missing = next((key for key in (*FIELDS, *required) if key not in link), None)
        expect(missing is None, f"'{missing}' is missing from a link: {shown(link)}. Each link needs path, line "
                                f"and target, and the tool's own outputSchema requires {shown(required)}")
    targets = [link.get("target") for link in links]
    expect(not any(name in targets for name in ATTACHMENTS),
           f"links to attachments ({', '.join(ATTACHMENTS)}) are not unresolved: the graph says kind "
           f"'attachment' for them (LinkGraph.unresolved leaves them out); the tool lists {shown(targets)}")
    found = sorted(({key: link.get(key) for key in FIELDS} for link in links),
                   key=lambda link: (str(link["path"]), str(link["line"]), str(link["target"])))
    where = [(link["path"], link["target"]) for link in found]
    expect(where != [(link["path"], link["target"]) for link in EXPECTED] or found == EXPECTED,
           f"the tool finds the right two links, but says they are on lines {shown([l['line'] for l in found])}: "
           f"both are on line 12, an integer, as Link.line holds it")
    expect(found == EXPECTED,
           f"the sample vault has exactly two unresolved links, both in Inbox/Try tangzhong.md on line 12: "
           f"{shown(EXPECTED)}. The tool lists {shown(found)}. Ask the link graph "
           f"(context.index.link_graph().unresolved()) for every note's links at once")
    expect(data.get("count") == len(EXPECTED),
           f"'count' should be the number of unresolved links, {len(EXPECTED)}; it is {shown(data.get('count'))}")
    try:
        twin = json.loads(text_of(result, "unresolved_links"))
    except ValueError:
        twin = None
    expect(twin == data, "the text block should carry the same data as structuredContent, as JSON (call_tool "
                         "does that when the tool returns a dict)")
    ok("unresolved_links finds the two links in Inbox/Try tangzhong.md, and no attachment")

    backlinks = server.call("tools/call", {"name": "get_backlinks", "arguments": {"path": "Glossary"}})
    expect(backlinks.get("result", {}).get("isError") is False,
           f"get_backlinks should work as before; it answered {shown(backlinks.get('result') or backlinks.get('error'))}")
    ok("get_backlinks works as before")
