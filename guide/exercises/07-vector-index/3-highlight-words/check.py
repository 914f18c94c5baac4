"""Snippets mark the words of the question in bold: **brine**, **cabbage**."""
import re

from probe import expect, ok, shown

QUERY = "brine cabbage"
QUERY_WORD = re.compile(r"\b(brine|cabbage)\b", re.IGNORECASE)


def snippets(server, **arguments) -> list[str]:
    answer = server.call("tools/call", {"name": "search_vault", "arguments": {"query": QUERY, **arguments}})
    result = answer.get("result", {})
    expect(result.get("isError") is False, f"search_vault {shown(arguments)} failed: {shown(result)}")
    return [hit.get("snippet", "") for hit in result.get("structuredContent", {}).get("results", [])]


def unmarked(snippet: str) -> list[str]:
    """The words of the question in the snippet that are not wrapped in ** **."""
    return [m.group() for m in QUERY_WORD.finditer(snippet)
            if snippet[m.start() - 2:m.start()] != "**" or snippet[m.end():m.end() + 2] != "**"]


def check(server):
    server.handshake()
    for mode in ("keyword", "hybrid"):
        found = snippets(server, mode=mode, limit=5)
        expect(any(QUERY_WORD.search(snippet) for snippet in found),
               f"a {mode} search for {QUERY!r} should show the words in its snippets; they were {shown(found)}")
        for snippet in found:
            missing = unmarked(snippet)
            expect(not missing,
                   f"in {mode} mode every word of the question in a snippet should be wrapped in ** **, as "
                   f"**brine**; {shown(missing)} is not, in {snippet!r}. Mark them in snippet() (search.py): "
                   f"matches() (keyword_index.py) finds them, by their normal form")
            expect(len(snippet) < 400, f"a snippet stays short, about 200 characters and the marks: {snippet!r}")
        ok(f"{mode} mode: every word of the question in a snippet is marked **like this**")
