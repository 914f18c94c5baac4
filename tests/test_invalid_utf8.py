"""A body whose JSON is well formed but whose bytes are not UTF-8 is a parse error on
every step: repaired with replacement characters, it would reach a tool altered."""
import http.client
import json

import pytest

from helpers import MCP_HEADERS

BODIES = [
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "\xff"}}}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "\xc3\x28"}}',
]


def post_bytes(client, body: bytes):
    connection = http.client.HTTPConnection(client.host, client.port, timeout=10)
    try:
        connection.request("POST", "/mcp", body, {**MCP_HEADERS, "Content-Length": str(len(body))})
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        connection.close()


@pytest.fixture(params=[1, 2, 3], ids=["step1", "step2", "step3"])
def any_step(request):
    return request.getfixturevalue(f"step{request.param}")


@pytest.mark.parametrize("body", BODIES, ids=["in-a-tool-argument", "in-initialize"])
def test_invalid_utf8_inside_valid_json_is_400_parse_error(any_step, body):
    status, answer = post_bytes(any_step, body)
    assert status == 400
    assert answer["id"] is None
    assert answer["error"]["code"] == -32700
