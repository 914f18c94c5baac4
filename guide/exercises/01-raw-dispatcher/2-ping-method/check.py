"""MCP's `ping` method, answered with an empty result."""
from probe import expect, ok, shown, text_of


def check(server):
    answer = server.call("ping")
    expect("error" not in answer,
           f"the ping method is answered with an error: {shown(answer.get('error'))}. Add a branch for it to "
           f"handle in server.py, beside initialize")
    expect(answer["result"] == {}, f"the ping method should answer an empty result, {{}}; it answered {shown(answer)}")
    ok("the ping method answers {}")

    reply = server.notify("ping")
    expect(reply.status == 202 and reply.body == b"",
           f"a ping without an id is a notification and must not be answered; it got HTTP {reply.status} "
           f"{reply.body[:200]!r}. Is the new branch below the check for a missing id?")
    ok("a ping notification still gets 202 and no answer")

    result = server.result("tools/call", {"name": "ping", "arguments": {}})
    expect(text_of(result, "the ping tool") == "pong", f"the ping tool should still answer 'pong': {shown(result)}")
    ok("the ping tool still answers pong")
