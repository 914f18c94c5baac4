"""search_vault takes `min_score` and leaves out the results that score below it."""
from probe import expect, ok, shown, text_of

QUERY = "salt"


def search(server, **arguments) -> dict:
    answer = server.call("tools/call", {"name": "search_vault", "arguments": {"query": QUERY, **arguments}})
    return answer.get("result", {})


def scores(server, **arguments) -> list:
    result = search(server, **arguments)
    expect(result.get("isError") is False, f"search_vault {shown(arguments)} failed: {shown(result)}")
    return [hit.get("score") for hit in result.get("structuredContent", {}).get("results", [])]


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    properties = tools.get("search_vault", {}).get("inputSchema", {}).get("properties", {})
    expect(properties.get("min_score", {}).get("type") == "number",
           f"search_vault's inputSchema should declare 'min_score', a number (in SEARCH_VAULT, tools.py); it "
           f"declares {shown(sorted(properties))}")
    ok("search_vault declares min_score")

    every = scores(server, mode="keyword", limit=10)
    expect(len(set(every)) >= 3, f"a keyword search for {QUERY!r} should find several notes; it found {shown(every)}")
    threshold = (every[1] + every[2]) / 2  # between two scores, so rounding cannot decide
    kept = scores(server, mode="keyword", limit=10, min_score=threshold)
    expect(kept == [score for score in every if score >= threshold],
           f"with min_score {threshold:.4f}, the keyword search for {QUERY!r} should keep the results that score "
           f"at least that, {shown([s for s in every if s >= threshold])}, and leave out the others (in "
           f"search_vault, tools.py); it kept {shown(kept)}")
    ok(f"min_score {threshold:.4f} keeps {len(kept)} of {len(every)} keyword results")

    hybrid = scores(server, limit=5)
    expect(scores(server, limit=5, min_score=hybrid[-1]) == hybrid,
           f"a result that scores exactly min_score stays: hybrid scores {shown(hybrid)}, min_score {hybrid[-1]}")
    expect(scores(server, limit=5, min_score=max(hybrid) + 1) == [],
           "a min_score above every score leaves no results: an empty list, not an error")
    expect(scores(server, limit=5) == hybrid, "without min_score, search_vault answers as before")
    ok("a score equal to min_score stays; above every score, no results; without it, as before")

    refused = search(server, min_score="high")
    expect(refused.get("isError") is True and "min_score" in text_of(refused, "min_score 'high'"),
           f"min_score 'high' is not a number: it should be refused with isError and a message that names "
           f"min_score; the answer was {shown(refused)}")
    ok("a min_score that is not a number is refused, by name")
