"""Step 3's routing headers in the stateless era: compared after trimming the spaces
HTTP allows around a value, and Mcp-Name's base64 form decoded strictly."""
import http.client
import json

import pytest

from helpers import CLIENT_INFO, MCP_HEADERS, rpc

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}
ECHO = rpc("tools/call", name="echo", arguments={"text": "routed"}, _meta=META)


def post_routed(client, method: str, name: str):
    """POST the echo call with these Mcp-Method and Mcp-Name values, sent as they are."""
    body = json.dumps(ECHO).encode()
    connection = http.client.HTTPConnection(client.host, client.port, timeout=10)
    try:
        connection.putrequest("POST", "/mcp")
        for header, value in [*MCP_HEADERS.items(), ("MCP-Protocol-Version", "2026-07-28"),
                              ("Mcp-Method", method), ("Mcp-Name", name), ("Content-Length", str(len(body)))]:
            connection.putheader(header, value)
        connection.endheaders(body)
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        connection.close()


@pytest.mark.parametrize("method,name", [("tools/call ", "echo  "), ("tools/call\t", "echo\t"),
                                         ("tools/call", "=?base64?ZWNobw==?= ")])
def test_spaces_around_a_routing_header_value_are_trimmed(step3, method, name):
    status, answer = post_routed(step3, method, name)
    assert status == 200, answer
    assert answer["result"]["content"][0]["text"] == "routed"


@pytest.mark.parametrize("method,name", [("tools/ call", "echo"), ("tools/call", "ec ho"),
                                         ("tools/call", "=?base64?ZW Nobw==?=")])
def test_spaces_inside_a_routing_header_value_are_a_mismatch(step3, method, name):
    status, answer = post_routed(step3, method, name)
    assert (status, answer["error"]["code"]) == (400, -32020)


@pytest.mark.parametrize("encoded", ["ZW*Nobw==", "ZWNobw==x", "ZWN\\obw==", "ZW.Nobw=="])
def test_mcp_name_base64_is_decoded_strictly(step3, encoded):
    # A lax decoder skips what is not base64 and reads each of these as "echo": a
    # gateway and this server would then disagree about which tool is called.
    status, answer = post_routed(step3, "tools/call", f"=?base64?{encoded}?=")
    assert (status, answer["error"]["code"]) == (400, -32020)
