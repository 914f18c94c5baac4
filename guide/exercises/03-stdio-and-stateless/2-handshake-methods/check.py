"""A 2026-07-28 request for initialize or ping is told why there is no such method."""
from probe import expect, ok, shown


def check(server):
    initialize = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}
    for method, params in (("ping", {}), ("initialize", initialize)):
        reply = server.stateless(method, params)
        answer = reply.json()
        error = answer.get("error") or {}
        expect(reply.status == 404 and error.get("code") == -32601,
               f"{method} in the 2026-07-28 era must stay HTTP 404 with -32601 (method not found): programs switch "
               f"on the code. It got HTTP {reply.status} and {shown(answer)}")
        expect("handshake" in error.get("message", ""),
               f"{method} in the 2026-07-28 era is told {error.get('message')!r}. Say that {method} belongs to the "
               f"handshake era, and what to send instead")
    ok("ping and initialize with 2026-07-28 _meta get 404 and -32601, and a message that says why")

    reply = server.stateless("notes/list")
    error = reply.json().get("error") or {}
    expect(reply.status == 404 and "handshake" not in error.get("message", ""),
           f"a method no era has, notes/list, should stay a plain 'Method not found'; it got HTTP {reply.status} "
           f"and {error.get('message')!r}")
    ok("a method that exists in no era is still plainly not found")

    server.handshake()
    expect(server.result("ping") == {}, "ping inside a handshake-era session should still answer {}")
    ok("ping in a handshake-era session still answers {}")
