"""initialize insists on a clientInfo with a name and a version."""
from probe import expect, ok, shown


def check(server):
    for client_info, key in (({}, "name"), ({"name": "curl"}, "version"), ({"name": 8, "version": "8"}, "name")):
        reply, answer = server.initialize(clientInfo=client_info)
        error = answer.get("error") or {}
        expect(error.get("code") == -32602,
               f"initialize with clientInfo {shown(client_info)} was answered {shown(answer)}. The specification "
               f"requires a name and a version, both strings: answer -32602 (invalid params)")
        expect(key in error.get("message", ""),
               f"initialize with clientInfo {shown(client_info)}: the error should name {key!r}; it says "
               f"{error.get('message')!r}")
        expect("Mcp-Session-Id" not in reply.headers,
               f"a failed initialize must not open a session, but the answer carries Mcp-Session-Id")
    ok("a clientInfo without a string name or version gets -32602, naming what is missing")

    reply, answer = server.initialize(clientInfo={"name": "curl", "version": "8"})
    expect("result" in answer, f"initialize with a complete clientInfo failed: {shown(answer.get('error'))}")
    ok("a complete clientInfo still opens a session")
