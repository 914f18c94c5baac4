"""Step 1 over real HTTP: the raw dispatcher's every behaviour."""
import subprocess
import sys

import pytest

from helpers import rpc
from manifest import find_step


def test_initialize_echoes_the_client_version(step1):
    for version in ("2025-11-25", "2025-03-26", "1999-01-01"):
        reply = step1.post(rpc("initialize", protocolVersion=version, capabilities={}, clientInfo={"name": "t"}))
        assert reply.status == 200
        assert reply.headers["Content-Type"] == "application/json"
        result = reply.json()["result"]
        assert result["protocolVersion"] == version
        assert result["capabilities"] == {"tools": {}}
        assert result["serverInfo"]["name"] == "vault-mcp"


def test_response_carries_the_request_id(step1):
    for request_id in (7, "abc", 0):
        assert step1.post(rpc("tools/list", id=request_id)).json()["id"] == request_id


def test_notification_gets_202_and_an_empty_body(step1):
    reply = step1.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert reply.status == 202
    assert reply.body == b""


def test_any_message_without_id_is_not_answered(step1):
    # An unknown notification and a response posted by a client: still 202, no body.
    responses = ({"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "id": 2, "error": {"code": 1}})
    for message in ({"jsonrpc": "2.0", "method": "notifications/whatever"}, *responses):
        reply = step1.post(message)
        assert (reply.status, reply.body) == (202, b"")


def test_tools_list_names_ping_and_echo_with_schemas(step1):
    tools = step1.post(rpc("tools/list")).json()["result"]["tools"]
    assert [t["name"] for t in tools] == ["ping", "echo"]
    for tool in tools:
        assert tool["description"]
        assert tool["inputSchema"]["type"] == "object"


def test_ping_tool_answers_pong(step1):
    result = step1.post(rpc("tools/call", name="ping", arguments={})).json()["result"]
    assert result == {"content": [{"type": "text", "text": "pong"}], "isError": False}


def test_echo_returns_its_text(step1):
    result = step1.post(rpc("tools/call", name="echo", arguments={"text": "zürich ✓"})).json()["result"]
    assert result["content"] == [{"type": "text", "text": "zürich ✓"}]
    assert result["isError"] is False


def test_echo_without_text_returns_empty_text_and_does_not_crash(step1):
    for params in ({"name": "echo", "arguments": {}}, {"name": "echo"}):
        body = step1.post(rpc("tools/call", **params)).json()
        assert body["result"] == {"content": [{"type": "text", "text": ""}], "isError": False}


def test_ping_tool_needs_no_arguments(step1):
    result = step1.post(rpc("tools/call", name="ping")).json()["result"]
    assert result == {"content": [{"type": "text", "text": "pong"}], "isError": False}


def test_unknown_tool_is_a_result_with_is_error(step1):
    reply = step1.post(rpc("tools/call", id=9, name="rm_rf", arguments={}))
    assert reply.status == 200
    body = reply.json()
    assert "error" not in body
    assert body["result"]["isError"] is True
    assert "rm_rf" in body["result"]["content"][0]["text"]


def test_unknown_method_is_a_jsonrpc_error(step1):
    body = step1.post(rpc("resources/list", id=4)).json()
    assert body["id"] == 4
    assert body["error"]["code"] == -32601
    assert "result" not in body


def test_broken_json_is_http_400_with_parse_error(step1):
    for raw in (b'{"jsonrpc": "2.0", "id": 1', b"", b"\xff\xfe not utf-8"):
        reply = step1.post(raw)
        assert reply.status == 400
        body = reply.json()
        assert body["id"] is None
        assert body["error"]["code"] == -32700


def test_deeply_nested_json_is_a_parse_error(step1):
    reply = step1.post(b"[" * 100_000 + b"]" * 100_000)
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32700)


def test_json_that_is_not_an_object_is_an_invalid_request(step1):
    for raw in ("[1, 2]", '"text"', "42"):
        reply = step1.post(raw)
        assert reply.status == 400
        assert reply.json()["error"]["code"] == -32600


def test_a_crash_inside_a_method_is_an_internal_error_and_the_server_lives(step1):
    # "params" as a list makes the dispatcher's params.get() fail.
    body = step1.post({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ["x"]}).json()
    assert body["id"] == 3
    assert body["error"]["code"] == -32603
    assert step1.post(rpc("tools/list")).status == 200


@pytest.mark.parametrize("path", ["/", "/mcp/x", "/mcpx", "/MCP", "/x/mcp"])
def test_other_paths_are_404(step1, path):
    reply = step1.post(rpc("tools/list"), path=path)
    assert reply.status == 404
    assert b"POST /mcp" in reply.body


def test_other_http_methods_are_405_with_allow(step1):
    for method in ("GET", "PUT", "DELETE", "PATCH"):
        reply = step1.request(method)
        assert reply.status == 405
        assert reply.headers["Allow"] == "POST"


def test_help_names_host_and_port():
    done = subprocess.run([sys.executable, str(find_step(1).server), "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    assert "--host" in done.stdout and "--port" in done.stdout


def test_binds_loopback_and_logs_to_stderr_only():
    process = subprocess.Popen(
        [sys.executable, str(find_step(1).server), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stderr.readline()
        assert "listening on http://127.0.0.1:" in line
    finally:
        process.terminate()
        stdout, _ = process.communicate(timeout=5)
    assert stdout == ""
