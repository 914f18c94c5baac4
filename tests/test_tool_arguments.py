"""Tool arguments, steps 2 and 3: what the model reads when they are wrong, and that a
tool which needs none can be called without any."""
import pytest

from helpers import CLIENT_INFO, rpc

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}
PONG = {"content": [{"type": "text", "text": "pong"}], "isError": False}


def tool_error(text):
    return {"content": [{"type": "text", "text": text}], "isError": True}


@pytest.mark.parametrize("arguments", [{}, {"text": 42}, {"text": None}, {"text": ["a"]}, {"txt": "a"}])
def test_a_missing_or_wrong_type_argument_tells_the_model_what_is_needed(server, arguments):
    session_id = server.open_session()
    body = server.send(session_id, rpc("tools/call", name="echo", arguments=arguments)).json()
    assert body["result"] == tool_error("echo needs the argument 'text', a string.")


@pytest.mark.parametrize("arguments", [["hi"], "hi", 7])
def test_arguments_that_are_not_an_object_tell_the_model_so(server, arguments):
    session_id = server.open_session()
    body = server.send(session_id, rpc("tools/call", name="echo", arguments=arguments)).json()
    assert body["result"] == tool_error("Tool arguments must be a JSON object.")


def test_a_tool_that_needs_no_arguments_can_be_called_without_them(server):
    session_id = server.open_session()
    body = server.send(session_id, rpc("tools/call", name="ping")).json()
    assert body["result"] == PONG


def test_stateless_a_tool_that_needs_no_arguments_can_be_called_without_them(step3):
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ping"}
    result = step3.post(rpc("tools/call", name="ping", _meta=META), headers).json()["result"]
    assert result["content"] == PONG["content"] and result["isError"] is False


def test_stdio_a_tool_that_needs_no_arguments_can_be_called_without_them(stdio):
    stdio.ask(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO))
    stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert stdio.ask(rpc("tools/call", id=2, name="ping"))["result"] == PONG
