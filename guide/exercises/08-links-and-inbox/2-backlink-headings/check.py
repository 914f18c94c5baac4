"""get_backlinks says under which heading of the linking note each link sits."""
from probe import expect, ok, shown

# (linking note, line) -> the heading above that line; "" above the first heading, and
# for a link in the properties.
KOJI = {
    ("Ferments/Miso.md", 4): "",  # related: "[[Koji]]", a property
    ("Ferments/Miso.md", 9): "Miso",
    ("Inbox/Rice koji quick capture.md", 8): "",  # a note without headings
    ("Kitchen/Proofing box.md", 37): "Checking what it actually did",
    ("Reading/The Noma Guide to Fermentation (notes).md", 22): "Koji",
}
TROUBLESHOOTING = {
    ("Ferments/Kimchi.md", 41): "Fermenting",
    ("Ferments/Kombucha.md", 43): "Second fermentation (F2)",
    ("Home.md", 28): "Ferments",
}


def backlinks(server, path: str) -> list:
    answer = server.call("tools/call", {"name": "get_backlinks", "arguments": {"path": path}})
    result = answer.get("result", {})
    expect(result.get("isError") is False, f"get_backlinks {path!r} failed: {shown(result or answer.get('error'))}")
    found = result.get("structuredContent", {}).get("backlinks")
    expect(isinstance(found, list) and all(isinstance(b, dict) for b in found),
           f"get_backlinks {path!r} should still answer a list of backlinks; it answers {shown(found)}")
    return found


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    items = (tools.get("get_backlinks", {}).get("outputSchema", {}).get("properties", {})
             .get("backlinks", {}).get("items", {}))
    expect(items.get("properties", {}).get("heading", {}).get("type") == "string",
           f"get_backlinks' outputSchema should declare 'heading', a string, in each backlink (GET_BACKLINKS in "
           f"tools.py); each backlink declares {shown(sorted(items.get('properties', {})))}")
    ok("get_backlinks' output schema declares a heading for each backlink")

    for path, expected in (("Ferments/Koji", KOJI), ("Ferments/Troubleshooting", TROUBLESHOOTING)):
        found = backlinks(server, path)
        expect(all("heading" in b for b in found),
               f"every backlink of {path!r} should carry 'heading'; get_backlinks answers {shown(found[:2])}")
        headings = {(b.get("path"), b.get("line")): b.get("heading") for b in found}
        for (source, line), heading in expected.items():
            expect(headings.get((source, line)) == heading,
                   f"the link to {path!r} in {source} on line {line} sits under the heading {heading!r}; "
                   f"get_backlinks says {shown(headings.get((source, line)))}. Keep each link's heading when "
                   f"the note is read (read_entry in links.py has the note's outline, with each heading's line); "
                   f"a link in the properties, or above the first heading, has \"\"")
        ok(f"the backlinks of {path} carry the heading they sit under")

    counts = {path: len(backlinks(server, path)) for path in ("Ferments/Koji", "Bread/Troubleshooting", "Glossary")}
    expect(counts == {"Ferments/Koji": 8, "Bread/Troubleshooting": 9, "Glossary": 3},
           f"the backlinks themselves should not change: Ferments/Koji has 8, Bread/Troubleshooting 9 and "
           f"Glossary 3; get_backlinks finds {shown(counts)}")
    ok("the same backlinks as before, each with its line and context")
