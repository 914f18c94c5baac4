"""Responses as SSE streams, in every copy of http_transport.py: the same headers a JSON
answer would carry, events a client can split, and a stream only for what succeeded in
the stateless era."""
import json

import pytest

from helpers import CLIENT_INFO, rpc

STREAMED = {"progressToken": "p1"}  # a progress token asks for a stream
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


def events(body: bytes) -> list[dict]:
    """The messages of an SSE body. Every event must end with a blank line: a client
    hands an event on only when it sees that line."""
    text = body.decode()
    assert text.endswith("\n\n"), f"the last event is not ended by a blank line: {text!r}"
    messages = []
    for event in text[:-2].split("\n\n"):
        assert event.startswith("event: message\ndata: "), event
        data = event.partition("\ndata: ")[2]
        assert "\n" not in data  # one data line: json.dumps never writes a newline
        messages.append(json.loads(data))
    return messages


def test_a_streamed_initialize_still_hands_out_the_session(door):
    server = door
    message = rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO, _meta=STREAMED)
    reply = server.post(message)
    assert reply.headers["Content-Type"] == "text/event-stream"
    session_id = reply.headers["Mcp-Session-Id"]
    assert events(reply.body)[0]["result"]["protocolVersion"] == "2025-11-25"
    assert server.send(session_id, {"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
    assert "result" in server.send(session_id, rpc("tools/list")).json()


def test_a_stream_is_not_cached_and_its_events_end_with_a_blank_line(door):
    session_id = door.open_session()
    reply = door.send(session_id, rpc("tools/list", id=6, _meta=STREAMED))
    assert reply.status == 200
    assert reply.headers["Content-Type"] == "text/event-stream"
    assert reply.headers["Cache-Control"] == "no-cache"
    [answer] = events(reply.body)
    assert answer["id"] == 6 and answer["result"]["tools"]


def post_stateless(client, message):
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": message["method"]}
    if message["method"] == "tools/call":
        headers["Mcp-Name"] = message["params"]["name"]
    return client.post(message, headers)


def test_stateless_a_stream_is_not_cached_and_its_events_end_with_a_blank_line(stateless_door):
    message = rpc("tools/list", id=3, _meta={**MODERN_META, **STREAMED})
    reply = post_stateless(stateless_door, message)
    assert reply.status == 200
    assert reply.headers["Content-Type"] == "text/event-stream"
    assert reply.headers["Cache-Control"] == "no-cache"
    [answer] = events(reply.body)
    assert answer["result"]["resultType"] == "complete"


@pytest.mark.parametrize(
    "message,status,code",
    [
        (rpc("tools/call", id=4, name="nope", arguments={}, _meta={**MODERN_META, **STREAMED}), 400, -32602),
        (rpc("prompts/list", id=5, _meta={**MODERN_META, **STREAMED}), 404, -32601),
        (rpc("tools/list", id=6, _meta={**MODERN_META, "io.modelcontextprotocol/clientCapabilities": None,
                                         **STREAMED}), 400, -32602),
    ],
    ids=["unknown-tool", "unknown-method", "broken-meta"],
)
def test_stateless_errors_keep_their_status_and_are_never_streamed(stateless_door, message, status, code):
    # In 2026-07-28 the status tells a proxy what went wrong; a stream starts with 200.
    reply = post_stateless(stateless_door, message)
    assert reply.status == status
    assert reply.headers["Content-Type"] == "application/json"
    assert reply.json()["error"]["code"] == code
