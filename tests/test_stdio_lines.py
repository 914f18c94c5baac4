"""Step 3 over stdio: a line that gets no answer writes nothing, and a line that is not
UTF-8 is refused whole, never repaired and answered."""
import pytest

from helpers import CLIENT_INFO, rpc

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


def notification(method, meta):
    return {"jsonrpc": "2.0", "method": method, "params": {"requestId": 1, "_meta": meta}}


@pytest.mark.parametrize(
    "message",
    [
        notification("notifications/cancelled", META),
        notification("notifications/whatever", META),
        notification("notifications/initialized", META),  # no session to complete
        notification("notifications/cancelled", {**META, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}),
        notification("notifications/cancelled", {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
        notification("notifications/cancelled", None),
    ],
    ids=["cancelled", "unknown", "initialized", "bad-version", "no-capabilities", "broken-meta"],
)
def test_stdio_a_stateless_notification_writes_nothing(stdio, message):
    # Answers come in order, one line each: the first line after the notification
    # must be the ping's answer, not an error about the notification.
    stdio.send(message)
    assert stdio.ask(rpc("ping", id=9)) == {"jsonrpc": "2.0", "id": 9, "result": {}}


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        b'"params": {"name": "echo", "arguments": {"text": "\xff"}}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"progressToken": "\xc3\x28"}}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "\xed\xa0\x80"}',  # an encoded surrogate
    ],
    ids=["bad-byte", "bad-sequence", "surrogate"],
)
def test_stdio_invalid_utf8_inside_valid_json_is_a_parse_error(stdio, line):
    stdio.send_line(line)
    answer = stdio.read()
    assert answer["id"] is None
    assert answer["error"]["code"] == -32700
    assert stdio.ask(rpc("ping", id=2))["result"] == {}  # and the server goes on
