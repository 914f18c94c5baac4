"""Step 3: the same core over stdio, and the 2026-07-28 stateless era on both transports."""
import base64
import http.client
import json
import subprocess
import sys

import pytest

from helpers import CLIENT_INFO, MCP_HEADERS, McpClient, rpc
from launch import running_server
from manifest import find_step

STEP = find_step(3)
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


def modern(method, id=1, **params):
    return rpc(method, id=id, **params, _meta=META)


def modern_headers(message):
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": message["method"]}
    if message["method"] == "tools/call" and "name" in message["params"]:
        headers["Mcp-Name"] = message["params"]["name"]
    return headers


@pytest.fixture(scope="module")
def step3():
    with running_server(STEP.server) as (url, _log):
        yield McpClient(url)


def post_modern(client, message, **header_changes):
    headers = {**modern_headers(message), **header_changes}
    return client.post(message, {k: v for k, v in headers.items() if v is not None})


class StdioServer:
    """The step's server as a subprocess, spoken to line by line."""

    def __init__(self):
        self.process = subprocess.Popen(
            [sys.executable, str(STEP.server), "--stdio"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )

    def send_line(self, data: bytes):
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def ask(self, message) -> dict:
        self.send_line(json.dumps(message).encode())
        return json.loads(self.process.stdout.readline())

    def close(self):
        """Close stdin; return (exit code, remaining stdout, stderr)."""
        stdout, stderr = self.process.communicate(timeout=10)
        return self.process.returncode, stdout, stderr


@pytest.fixture
def stdio():
    server = StdioServer()
    yield server
    if server.process.poll() is None:
        server.process.kill()
        server.process.communicate()


# stdio

def test_stdio_handshake_conversation(stdio):
    result = stdio.ask(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO))
    assert result["result"]["protocolVersion"] == "2025-11-25"
    stdio.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
    tools = stdio.ask(rpc("tools/list", id=2))["result"]["tools"]
    assert [t["name"] for t in tools] == ["ping", "echo"]
    call = stdio.ask(rpc("tools/call", id=3, name="echo", arguments={"text": "a\nb"}))
    assert call["result"]["content"][0]["text"] == "a\nb"
    code, rest, stderr = stdio.close()
    assert (code, rest) == (0, b"")  # the notification got no answer; EOF ends the server cleanly
    assert b"stdin closed" in stderr


def test_stdio_process_is_the_session_and_the_lifecycle_holds(stdio):
    assert stdio.ask(rpc("tools/list"))["error"]["code"] == -32600
    assert stdio.ask(rpc("ping", id=2))["result"] == {}


def test_stdio_stateless_requests_need_no_handshake(stdio):
    discover = stdio.ask(modern("server/discover"))["result"]
    assert discover["resultType"] == "complete"
    assert MODERN in discover["supportedVersions"]
    call = stdio.ask(modern("tools/call", id=2, name="echo", arguments={"text": "hi"}))["result"]
    assert call["resultType"] == "complete"
    assert call["content"][0]["text"] == "hi"


def test_stdio_serves_both_eras_in_one_process(stdio):
    stdio.ask(rpc("initialize", protocolVersion="2025-06-18", capabilities={}, clientInfo=CLIENT_INFO))
    assert "resultType" in stdio.ask(modern("tools/list", id=2))["result"]
    stdio.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
    assert "resultType" not in stdio.ask(rpc("tools/list", id=3))["result"]


def test_stdio_bad_lines_get_errors_and_the_server_goes_on(stdio):
    stdio.send_line(b"{not json")
    assert json.loads(stdio.process.stdout.readline())["error"]["code"] == -32700
    stdio.send_line(b"\xff\xfe")
    assert json.loads(stdio.process.stdout.readline())["error"]["code"] == -32700
    assert stdio.ask([rpc("ping")])["error"]["code"] == -32600
    stdio.send_line(b"")  # blank lines are skipped, not answered
    assert stdio.ask(rpc("ping", id=9)) == {"jsonrpc": "2.0", "id": 9, "result": {}}


def test_stdio_deeply_nested_json_is_a_parse_error_and_the_server_lives(stdio):
    stdio.send_line(b"[" * 100_000 + b"]" * 100_000)
    assert json.loads(stdio.process.stdout.readline())["error"]["code"] == -32700
    assert stdio.ask(rpc("ping", id=2))["result"] == {}


def test_stdio_a_line_of_exactly_the_limit_is_read(stdio):
    ping = json.dumps(rpc("ping", id=3)).encode()
    stdio.send_line(ping + b" " * (4 * 1024 * 1024 - len(ping)))
    assert json.loads(stdio.process.stdout.readline())["result"] == {}


def test_stdio_discover_without_meta_is_answered_in_the_new_era(stdio):
    for message in (rpc("server/discover"), rpc("tools/list", id=2, _meta=None), rpc("tools/list", id=3, _meta=[])):
        answer = stdio.ask(message)
        assert answer["error"]["code"] == -32602, answer
        assert "_meta" in answer["error"]["message"]


def test_stdio_a_handshake_version_in_meta_points_to_initialize(stdio):
    message = modern("tools/list")
    message["params"]["_meta"] = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    error = stdio.ask(message)["error"]
    assert error["code"] == -32022
    assert "send initialize" in error["message"]
    assert "2025-11-25" in error["data"]["supported"]


def test_stdio_a_closed_stdout_ends_the_server_quietly():
    server = StdioServer()
    server.process.stdout.close()
    server.send_line(json.dumps(rpc("ping")).encode())
    server.process.stdin.close()
    assert server.process.wait(timeout=10) == 0
    assert b"Traceback" not in server.process.stderr.read()


def test_stdio_an_overlong_line_is_refused_and_skipped(stdio):
    stdio.send_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * (5 * 1024 * 1024) + b'"}')
    error = json.loads(stdio.process.stdout.readline())
    assert error["error"]["code"] == -32600
    assert "bytes" in error["error"]["message"]
    assert stdio.ask(rpc("ping", id=2))["result"] == {}


def test_stdio_stdout_carries_only_protocol_lines(stdio):
    stdio.ask(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO))
    stdio.ask(rpc("tools/call", id=2, name="nope"))
    stdio.send_line(b"garbage")
    _code, rest, stderr = stdio.close()
    for line in rest.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert stderr  # the log went to stderr


def test_client_py_prints_a_conversation_in_both_eras():
    done = subprocess.run([sys.executable, str(STEP.path / "client.py")], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    sent = [line for line in done.stdout.splitlines() if line.startswith(">>> ")]
    received = [line for line in done.stdout.splitlines() if line.startswith("<<< ")]
    assert len(sent) == len(received) + 1  # one notification, never answered
    assert any('"server/discover"' in line for line in sent)
    for line in received:
        json.loads(line[4:])


# HTTP, stateless era

def test_discover_result_is_complete(step3):
    reply = post_modern(step3, modern("server/discover"))
    assert reply.status == 200
    assert "Mcp-Session-Id" not in reply.headers
    result = reply.json()["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")
    assert result["_meta"][SERVER_INFO_KEY]["name"] == "vault-mcp"
    assert result["instructions"]


def test_stateless_tools_list_and_call(step3):
    listed = post_modern(step3, modern("tools/list")).json()["result"]
    assert listed["resultType"] == "complete" and "ttlMs" in listed and "cacheScope" in listed
    assert [t["name"] for t in listed["tools"]] == ["ping", "echo"]
    called = post_modern(step3, modern("tools/call", name="echo", arguments={"text": "x"})).json()["result"]
    assert called["resultType"] == "complete"
    assert called["_meta"][SERVER_INFO_KEY]["version"]
    assert "ttlMs" not in called  # only lists (and discover) carry cache hints
    bad = post_modern(step3, modern("tools/call", name="echo", arguments={})).json()["result"]
    assert bad["isError"] is True and bad["resultType"] == "complete"


def test_stateless_unknown_tool_is_400_invalid_params(step3):
    reply = post_modern(step3, modern("tools/call", name="nope", arguments={}))
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32602


def test_stateless_sse_when_progress_is_requested(step3):
    message = modern("tools/call", name="echo", arguments={"text": "s"})
    message["params"]["_meta"] = {**META, "progressToken": 1}
    reply = post_modern(step3, message)
    assert reply.headers["Content-Type"] == "text/event-stream"
    assert '"resultType": "complete"' in reply.body.decode()


@pytest.mark.parametrize(
    "change",
    [
        {"Mcp-Method": "tools/list"},
        {"Mcp-Method": None},
        {"Mcp-Name": "ping"},
        {"Mcp-Name": None},
        {"Mcp-Name": "=?base64?not base64?="},
    ],
)
def test_routing_headers_must_match_the_body(step3, change):
    reply = post_modern(step3, modern("tools/call", name="echo", arguments={"text": "x"}), **change)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32020


def test_version_header_must_match_meta(step3):
    message = modern("tools/list")
    message["params"]["_meta"] = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    reply = post_modern(step3, message)
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32020)


def test_mcp_method_is_never_base64_decoded(step3):
    # Only Mcp-Name may use the base64 form; a gateway routing on Mcp-Method must see the truth.
    encoded = "=?base64?" + base64.b64encode(b"tools/call").decode() + "?="
    reply = post_modern(step3, modern("tools/call", name="echo", arguments={"text": "x"}), **{"Mcp-Method": encoded})
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32020)


@pytest.mark.parametrize("raw", [b"\xe9cho", b"ec\tho", b"echo\x01"])
def test_a_routing_header_that_is_not_plain_ascii_is_a_mismatch(step3, raw):
    body = json.dumps(modern("tools/call", name=raw.decode("latin-1"), arguments={})).encode()
    connection = http.client.HTTPConnection(step3.host, step3.port, timeout=10)
    connection.putrequest("POST", "/mcp")
    for name, value in [*MCP_HEADERS.items(), ("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/call"),
                        ("Content-Length", str(len(body)))]:
        connection.putheader(name, value)
    connection.putheader("Mcp-Name", raw)
    connection.endheaders(body)
    reply = connection.getresponse()
    assert (reply.status, json.loads(reply.read())["error"]["code"]) == (400, -32020)
    connection.close()


def test_a_broken_body_is_reported_before_its_headers(step3):
    # No tool name, or a version that is not a string: the body is wrong, so -32602, not -32020.
    no_name = modern("tools/call", arguments={})
    assert post_modern(step3, no_name, **{"Mcp-Name": "echo"}).json()["error"]["code"] == -32602
    null_version = modern("tools/list")
    null_version["params"]["_meta"] = {**META, "io.modelcontextprotocol/protocolVersion": None}
    assert post_modern(step3, null_version).json()["error"]["code"] == -32602


def test_a_stateless_client_may_not_post_responses(step3):
    reply = step3.post({"jsonrpc": "2.0", "id": 9, "result": {}}, {"MCP-Protocol-Version": MODERN})
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32600)


def test_a_missing_version_header_with_modern_meta_is_a_mismatch(step3):
    message = modern("tools/list")
    reply = step3.post(message, {"Mcp-Method": "tools/list"})
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32020)


def test_mcp_name_in_base64_form_is_decoded(step3):
    encoded = "=?base64?" + base64.b64encode(b"echo").decode() + "?="
    reply = post_modern(step3, modern("tools/call", name="echo", arguments={"text": "b64"}), **{"Mcp-Name": encoded})
    assert reply.json()["result"]["content"][0]["text"] == "b64"


def test_a_duplicated_routing_header_is_a_mismatch(step3):
    message = json.dumps(modern("tools/list")).encode()
    connection = http.client.HTTPConnection(step3.host, step3.port, timeout=10)
    connection.putrequest("POST", "/mcp")
    for name, value in [*MCP_HEADERS.items(), ("MCP-Protocol-Version", MODERN),
                        ("Mcp-Method", "tools/list"), ("Mcp-Method", "tools/list"),
                        ("Content-Length", str(len(message)))]:
        connection.putheader(name, value)
    connection.endheaders(message)
    reply = connection.getresponse()
    assert reply.status == 400
    assert json.loads(reply.read())["error"]["code"] == -32020
    connection.close()


@pytest.mark.parametrize("version", ["2027-01-01", "1999-01-01", "garbage"])
def test_an_unsupported_version_is_32022_with_the_supported_list(step3, version):
    message = modern("tools/list")
    message["params"]["_meta"] = {**META, "io.modelcontextprotocol/protocolVersion": version}
    reply = post_modern(step3, message, **{"MCP-Protocol-Version": version})
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == -32022
    supported = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    assert error["data"] == {"supported": supported, "requested": version}


def test_an_unknown_method_is_404_with_32601(step3):
    for method in ("ping", "initialize", "resources/list"):
        reply = post_modern(step3, modern(method))
        assert (reply.status, reply.json()["error"]["code"]) == (404, -32601)


@pytest.mark.parametrize(
    "meta",
    [None, {}, {"io.modelcontextprotocol/protocolVersion": MODERN},
     {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": []}],
)
def test_missing_or_malformed_meta_is_400_invalid_params(step3, meta):
    message = rpc("tools/list")
    if meta is not None:
        message["params"] = {"_meta": meta}
    reply = step3.post(message, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"})
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32602)


def test_stateless_get_and_delete_are_405(step3):
    for method in ("GET", "DELETE"):
        reply = step3.request(method, headers={"MCP-Protocol-Version": MODERN})
        assert reply.status == 405
        assert reply.headers["Allow"] == "POST"


def test_a_stateless_notification_is_accepted(step3):
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "_meta": META}}
    reply = step3.post(message, {"MCP-Protocol-Version": MODERN})
    assert (reply.status, reply.body) == (202, b"")


def test_stateless_requests_ignore_a_session_header(step3):
    reply = post_modern(step3, modern("tools/list"), **{"Mcp-Session-Id": "whatever"})
    assert reply.status == 200


def test_stateless_requests_still_pass_the_door(step3):
    assert post_modern(step3, modern("tools/list"), Origin="https://evil.example").status == 403


# Both eras on one HTTP server

def test_the_handshake_era_still_works_beside_the_stateless_one(step3):
    session_id = step3.open_session()
    legacy = step3.send(session_id, rpc("tools/list")).json()["result"]
    assert "resultType" not in legacy
    assert post_modern(step3, modern("tools/list")).json()["result"]["resultType"] == "complete"
    assert step3.request("GET").headers["Allow"] == "POST, DELETE"


def test_a_handshake_client_probing_with_discover_gets_an_answer_it_can_use(step3):
    # A client that speaks both eras probes first; the answer names both eras'
    # versions, so a client that only knows the handshake can see 2025-11-25 there.
    result = post_modern(step3, modern("server/discover")).json()["result"]
    assert "2025-11-25" in result["supportedVersions"]
