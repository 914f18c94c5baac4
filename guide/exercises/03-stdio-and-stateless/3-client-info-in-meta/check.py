"""A 2026-07-28 request's clientInfo in _meta, when sent, names the client properly."""
from probe import META, expect, ok, shown

CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


def check(server):
    for info, key in (("curl", "name"), ({"name": "curl"}, "version"), ({"version": "8"}, "name")):
        reply = server.stateless("tools/list", meta={**META, CLIENT_INFO: info})
        answer = reply.json()
        error = answer.get("error") or {}
        expect(reply.status == 400 and error.get("code") == -32602,
               f"tools/list with clientInfo {shown(info)} in _meta should get HTTP 400 and -32602: when a client "
               f"sends clientInfo, it must be an object with a string name and version. It got HTTP {reply.status} "
               f"and {shown(answer)}")
        expect("clientInfo" in error.get("message", "") and key in error.get("message", ""),
               f"the error for clientInfo {shown(info)} should mention clientInfo and {key!r}; it says "
               f"{error.get('message')!r}")
    ok("a clientInfo that is not an object with a string name and version gets 400 and -32602")

    without = {key: value for key, value in META.items() if key != CLIENT_INFO}
    for meta, what in ((META, "a complete clientInfo"), (without, "no clientInfo at all")):
        reply = server.stateless("tools/list", meta=meta)
        expect(reply.status == 200 and "result" in reply.json(),
               f"tools/list with {what} should still work (clientInfo is optional); it got HTTP {reply.status} "
               f"and {shown(reply.json())}")
    ok("a complete clientInfo, or none, is still served")
