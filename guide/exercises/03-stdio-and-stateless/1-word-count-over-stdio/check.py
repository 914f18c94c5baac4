"""A tool `word_count` that logs each count to stderr, over stdio, in both eras."""
from probe import CLIENT_INFO, META, expect, ok, shown, text_of

TEXT = "one two  three\nfour"


def call(request_id, arguments, meta=None):
    params = {"name": "word_count", "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def check(server):
    run = server.stdio([
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        call(3, {"text": TEXT}),
        call(4, {}),
        call(5, {"text": TEXT}, META),
    ])
    answers = run.messages()  # fails on the first stdout line that is not protocol
    tools = answers.get(2, {}).get("result", {}).get("tools", [])
    expect("word_count" in [tool.get("name") for tool in tools],
           f"tools/list over stdio offers no tool named 'word_count': add it to TOOLS in tools.py")
    ok("stdout carries JSON messages only, and tools/list offers word_count")

    for request_id, era in ((3, "in the handshake era"), (5, "in the 2026-07-28 era")):
        answer = answers.get(request_id, {})
        expect("result" in answer, f"word_count {era} failed: {shown(answer.get('error', answer))}")
        expect(answer["result"].get("isError") is False and text_of(answer["result"], "word_count") == "4",
               f"word_count {era} should answer \"4\" for {TEXT!r}; it answered {shown(answer['result'])}")
    ok("word_count answers 4 in both eras, on the same stdin")

    refused = answers.get(4, {}).get("result", {})
    expect(refused.get("isError") is True, f"word_count without text should be a tool error; it answered "
                                           f"{shown(answers.get(4))}")
    ok("word_count without text is a tool error")

    expect("counted 4 words" in run.stderr,
           f"stderr has no log line 'counted 4 words'. Log each count with log.info(\"counted %d words\", count); "
           f"the server's stderr was:\n{run.stderr[-1000:]}")
    ok("each count is logged on stderr")
