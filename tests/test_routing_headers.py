"""The routing headers of the stateless era, in every copy of http_transport.py from
step 3: compared after trimming the spaces HTTP allows around a value, and Mcp-Name's
base64 form decoded strictly. The tool called is echo in step 3, get_note after."""
import base64
import http.client
import json

import pytest

from helpers import CLIENT_INFO, MCP_HEADERS, rpc

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


def tool_call(client) -> dict:
    if client.step == 3:
        return rpc("tools/call", name="echo", arguments={"text": "routed"}, _meta=META)
    return rpc("tools/call", name="get_note", arguments={"path": "Home.md"}, _meta=META)


def post_routed(client, method: str, name):
    """POST the step's tool call with these Mcp-Method and Mcp-Name values, sent as they
    are; name(tool, b64) makes Mcp-Name from the tool's name and its base64 form."""
    call = tool_call(client)
    tool = call["params"]["name"]
    name = name(tool, base64.b64encode(tool.encode()).decode())
    body = json.dumps(call).encode()
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


# Each Mcp-Name below is made from the tool's name and its base64 form.
@pytest.mark.parametrize("method,name", [("tools/call ", lambda tool, b64: f"{tool}  "),
                                         ("tools/call\t", lambda tool, b64: f"{tool}\t"),
                                         ("tools/call", lambda tool, b64: f"=?base64?{b64}?= ")],
                         ids=["spaces", "tab", "base64"])
def test_spaces_around_a_routing_header_value_are_trimmed(stateless_door, method, name):
    status, answer = post_routed(stateless_door, method, name)
    assert status == 200, answer
    assert answer["result"]["isError"] is False


@pytest.mark.parametrize("method,name", [("tools/ call", lambda tool, b64: tool),
                                         ("tools/call", lambda tool, b64: f"{tool[:2]} {tool[2:]}"),
                                         ("tools/call", lambda tool, b64: f"=?base64?{b64[:2]} {b64[2:]}?=")],
                         ids=["method", "name", "base64"])
def test_spaces_inside_a_routing_header_value_are_a_mismatch(stateless_door, method, name):
    status, answer = post_routed(stateless_door, method, name)
    assert (status, answer["error"]["code"]) == (400, -32020)


@pytest.mark.parametrize("spoil", [lambda b64: f"{b64[:2]}*{b64[2:]}", lambda b64: f"{b64}x",
                                   lambda b64: f"{b64[:3]}\\{b64[3:]}", lambda b64: f"{b64[:2]}.{b64[2:]}"],
                         ids=["star", "trailing", "backslash", "dot"])
def test_mcp_name_base64_is_decoded_strictly(stateless_door, spoil):
    # A lax decoder skips what is not base64 and reads each of these as the tool's name:
    # a gateway and this server would then disagree about which tool is called.
    status, answer = post_routed(stateless_door, "tools/call", lambda tool, b64: f"=?base64?{spoil(b64)}?=")
    assert (status, answer["error"]["code"]) == (400, -32020)
