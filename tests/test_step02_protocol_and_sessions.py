"""Step 2 over real HTTP: negotiation, lifecycle, validation, sessions, the HTTP rules."""
import http.client
import json

import pytest

from helpers import CLIENT_INFO, MCP_HEADERS, rpc

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


# Negotiation and the handshake

@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
def test_a_supported_version_is_answered_in_kind(step2, version):
    result = step2.initialize(version).json()["result"]
    assert result["protocolVersion"] == version


@pytest.mark.parametrize("version", ["2099-01-01", "2025-01-01", "latest"])
def test_an_unsupported_version_gets_the_newest_supported(step2, version):
    result = step2.initialize(version).json()["result"]
    assert result["protocolVersion"] == "2025-11-25"


def test_initialize_result_has_capabilities_server_info_and_instructions(step2):
    result = step2.initialize().json()["result"]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "vault-mcp"
    assert result["serverInfo"]["version"]
    assert "echo" in result["instructions"]


@pytest.mark.parametrize(
    "params",
    [
        {"capabilities": {}, "clientInfo": CLIENT_INFO},
        {"protocolVersion": 20251125, "capabilities": {}, "clientInfo": CLIENT_INFO},
        {"protocolVersion": "2025-11-25", "clientInfo": CLIENT_INFO},
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": "me"},
    ],
)
def test_initialize_with_bad_params_is_invalid_params_and_opens_no_session(step2, params):
    reply = step2.post(rpc("initialize", **params))
    assert reply.json()["error"]["code"] == -32602
    assert "Mcp-Session-Id" not in reply.headers


def test_session_ids_are_fresh_unguessable_visible_ascii(step2):
    ids = {step2.initialize().headers["Mcp-Session-Id"] for _ in range(5)}
    assert len(ids) == 5
    for session_id in ids:
        assert len(session_id) >= 32
        assert all(0x21 <= ord(c) <= 0x7E for c in session_id)


def test_before_the_handshake_only_ping_is_served(step2):
    session_id = step2.initialize().headers["Mcp-Session-Id"]
    early = step2.send(session_id, rpc("tools/list", id=2)).json()
    assert early["error"]["code"] == -32600
    assert "notifications/initialized" in early["error"]["message"]
    assert step2.send(session_id, rpc("ping", id=3)).json() == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert step2.send(session_id, INITIALIZED).status == 202
    assert "result" in step2.send(session_id, rpc("tools/list", id=4)).json()


def test_an_unknown_method_before_the_handshake_is_still_an_error(step2):
    # A 2026-era client probes with server/discover; it must get an error, not silence.
    session_id = step2.initialize().headers["Mcp-Session-Id"]
    assert step2.send(session_id, rpc("server/discover")).json()["error"]["code"] == -32601


def test_a_second_initialize_on_a_session_is_refused(step2):
    session_id = step2.open_session()
    again = rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO)
    body = step2.send(session_id, again).json()
    assert body["error"]["code"] == -32600
    assert "already initialized" in body["error"]["message"]
    assert "result" in step2.send(session_id, rpc("tools/list")).json()  # the session lives on


def test_sessions_are_independent(step2):
    ready = step2.open_session()
    fresh = step2.initialize().headers["Mcp-Session-Id"]
    assert "result" in step2.send(ready, rpc("tools/list")).json()
    assert "error" in step2.send(fresh, rpc("tools/list")).json()


# Tools

def test_tools_list_and_calls(step2):
    session_id = step2.open_session()
    tools = step2.send(session_id, rpc("tools/list")).json()["result"]["tools"]
    assert [t["name"] for t in tools] == ["ping", "echo"]
    result = step2.send(session_id, rpc("tools/call", name="echo", arguments={"text": "hi"})).json()["result"]
    assert result == {"content": [{"type": "text", "text": "hi"}], "isError": False}


@pytest.mark.parametrize("arguments", [{}, {"text": 42}, {"text": None}, ["hi"], "hi"])
def test_bad_tool_arguments_are_a_tool_error_for_the_model(step2, arguments):
    session_id = step2.open_session()
    body = step2.send(session_id, rpc("tools/call", name="echo", arguments=arguments)).json()
    assert body["result"]["isError"] is True
    assert body["result"]["content"][0]["type"] == "text"


def test_an_unknown_tool_is_invalid_params(step2):
    session_id = step2.open_session()
    body = step2.send(session_id, rpc("tools/call", id=8, name="nope", arguments={})).json()
    assert body["id"] == 8
    assert body["error"]["code"] == -32602
    assert "nope" in body["error"]["message"]


def test_an_unknown_method_is_method_not_found(step2):
    session_id = step2.open_session()
    assert step2.send(session_id, rpc("resources/list")).json()["error"]["code"] == -32601


# JSON-RPC validation

@pytest.mark.parametrize(
    "message,code",
    [
        ({"id": 1, "method": "ping"}, -32600),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": 1}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": 7}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}, -32602),
        ('"a JSON string"', -32600),
        ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], -32600),
    ],
)
def test_invalid_messages_are_http_400_with_a_jsonrpc_error(step2, message, code):
    session_id = step2.open_session()
    reply = step2.send(session_id, message)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == code


def test_a_batch_is_refused_with_a_clear_reason(step2):
    session_id = step2.open_session()
    reply = step2.send(session_id, [rpc("ping", id=1), rpc("ping", id=2)])
    assert "Batches are not supported" in reply.json()["error"]["message"]


def test_broken_json_is_a_parse_error(step2):
    session_id = step2.open_session()
    for raw in (b'{"jsonrpc": "2.0", ', b"\xff\xfe", b""):
        reply = step2.send(session_id, raw)
        assert reply.status == 400
        assert reply.json() == {"jsonrpc": "2.0", "id": None, "error": reply.json()["error"]}
        assert reply.json()["error"]["code"] == -32700


def test_a_response_from_the_client_is_accepted_with_202(step2):
    session_id = step2.open_session()
    reply = step2.send(session_id, {"jsonrpc": "2.0", "id": 5, "result": {}})
    assert (reply.status, reply.body) == (202, b"")


def test_unknown_notifications_are_accepted_silently(step2):
    session_id = step2.open_session()
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert (step2.send(session_id, message).status, step2.send(session_id, message).body) == (202, b"")


# Sessions over HTTP

def test_a_request_without_a_session_id_is_400(step2):
    reply = step2.post(rpc("tools/list", id=3))
    assert reply.status == 400
    assert reply.json()["id"] == 3
    assert "Mcp-Session-Id" in reply.json()["error"]["message"]


def test_a_notification_without_a_session_id_is_400(step2):
    assert step2.post(INITIALIZED).status == 400


def test_an_unknown_session_is_404(step2):
    assert step2.send("not-a-session", rpc("ping")).status == 404


def test_delete_ends_the_session(step2):
    session_id = step2.open_session()
    reply = step2.request("DELETE", headers={"Mcp-Session-Id": session_id})
    assert (reply.status, reply.body) == (204, b"")
    assert "Content-Length" not in reply.headers
    assert step2.send(session_id, rpc("ping")).status == 404
    assert step2.request("DELETE", headers={"Mcp-Session-Id": session_id}).status == 404


def test_delete_without_a_session_id_is_400(step2):
    assert step2.request("DELETE").status == 400


# The HTTP rules

def test_an_unsupported_protocol_version_header_is_400(step2):
    session_id = step2.open_session()
    reply = step2.send(session_id, rpc("ping"), {"MCP-Protocol-Version": "1999-01-01"})
    assert reply.status == 400
    assert "2025-11-25" in reply.json()["error"]["message"]


def test_a_missing_protocol_version_header_means_the_sessions_version(step2):
    session_id = step2.open_session()
    reply = step2.post(rpc("ping"), {"Mcp-Session-Id": session_id})
    assert reply.json()["result"] == {}


@pytest.mark.parametrize("accept", [None, "application/json", "text/event-stream", "text/html"])
def test_accept_must_allow_json_and_sse(step2, accept):
    headers = {"Accept": accept} if accept else {}
    reply = step2.request("POST", json.dumps(rpc("ping")), {"Content-Type": "application/json", **headers})
    assert reply.status == 406


@pytest.mark.parametrize("accept", ["*/*", "application/json;q=0.9, text/event-stream;q=0.8", "application/*, text/*"])
def test_accept_wildcards_and_parameters_are_understood(step2, accept):
    reply = step2.post(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO),
                       {"Accept": accept})
    assert reply.status == 200


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_content_type_must_be_json(step2, content_type):
    headers = {"Accept": MCP_HEADERS["Accept"]}
    if content_type:
        headers["Content-Type"] = content_type
    assert step2.request("POST", json.dumps(rpc("ping")), headers).status == 415


def test_content_type_with_charset_is_json(step2):
    reply = step2.post(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO),
                       {"Content-Type": "application/json; charset=utf-8"})
    assert reply.status == 200


@pytest.mark.parametrize("method,reason", [("GET", "no GET stream"), ("PUT", "with POST"), ("PATCH", "with POST")])
def test_other_methods_are_405_with_the_reason(step2, method, reason):
    reply = step2.request(method, headers={"Accept": "text/event-stream"})
    assert reply.status == 405
    assert reply.headers["Allow"] == "POST, DELETE"
    assert reason in reply.json()["error"]["message"]


def test_get_checks_the_origin_too(step2):
    assert step2.request("GET", headers={"Origin": "https://evil.example"}).status == 403


def test_other_paths_are_404(step2):
    assert step2.post(rpc("ping"), path="/").status == 404
    assert step2.post(rpc("ping"), path="/mcp/x").status == 404


@pytest.mark.parametrize("origin", ["https://evil.example", "http://127.0.0.1.evil.example", "null"])
def test_a_foreign_origin_is_403(step2, origin):
    assert step2.post(rpc("ping"), {"Origin": origin}).status == 403


@pytest.mark.parametrize("origin", ["http://localhost:6274", "http://127.0.0.1:3000", "http://[::1]:8080"])
def test_a_local_origin_is_allowed(step2, origin):
    reply = step2.post(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO),
                       {"Origin": origin})
    assert reply.status == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:3000", "192.168.1.10:3000"])
def test_a_foreign_host_is_403(step2, host):
    assert step2.post(rpc("ping"), {"Host": host}).status == 403


def test_localhost_by_name_is_allowed(step2):
    reply = step2.post(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO),
                       {"Host": f"localhost:{step2.port}"})
    assert reply.status == 200


def test_a_body_over_4_mib_is_refused_unread_with_413(step2):
    connection = http.client.HTTPConnection(step2.host, step2.port, timeout=10)
    connection.putrequest("POST", "/mcp")
    for name, value in MCP_HEADERS.items():
        connection.putheader(name, value)
    connection.putheader("Content-Length", str(5 * 1024 * 1024))
    connection.endheaders()  # the body is never sent: the answer must come from the headers
    reply = connection.getresponse()
    assert reply.status == 413
    assert "4194304" in json.loads(reply.read())["error"]["message"]
    connection.close()


def test_a_body_just_under_the_limit_is_read(step2):
    padded = json.dumps(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO))
    padded += " " * (4 * 1024 * 1024 - len(padded))
    assert step2.post(padded).status == 200


def test_a_missing_content_length_is_411_and_a_bad_one_400(step2):
    connection = http.client.HTTPConnection(step2.host, step2.port, timeout=10)
    connection.putrequest("POST", "/mcp")
    for name, value in MCP_HEADERS.items():
        connection.putheader(name, value)
    connection.endheaders()
    assert connection.getresponse().status == 411
    connection.close()
    assert step2.post(rpc("ping"), {"Content-Length": "-5"}).status == 400


# Two response shapes

def test_a_request_with_a_progress_token_is_answered_as_an_sse_stream(step2):
    session_id = step2.open_session()
    call = rpc("tools/call", id=6, name="echo", arguments={"text": "s"}, _meta={"progressToken": "t"})
    reply = step2.send(session_id, call)
    assert reply.status == 200
    assert reply.headers["Content-Type"] == "text/event-stream"
    assert reply.headers["X-Accel-Buffering"] == "no"  # proxies: pass each event on at once
    events = reply.body.decode().split("\n\n")
    assert events[0].startswith("event: message\ndata: ")
    assert json.loads(events[0].split("data: ", 1)[1])["result"]["content"][0]["text"] == "s"
    assert "id:" not in reply.body.decode()  # no resumable ids: this server cannot resume


def test_a_plain_request_is_answered_as_json(step2):
    session_id = step2.open_session()
    reply = step2.send(session_id, rpc("ping"))
    assert reply.headers["Content-Type"] == "application/json"


# Hostile input: every one gets an HTTP answer

def raw_post(client, headers: list[tuple[str, str]], body: bytes = b""):
    connection = http.client.HTTPConnection(client.host, client.port, timeout=10)
    connection.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
    for name, value in headers:
        connection.putheader(name, value)
    connection.endheaders(body)
    reply = connection.getresponse()
    status, body = reply.status, json.loads(reply.read())
    connection.close()
    return status, body


def good_headers(client, body: bytes):
    return [("Host", f"127.0.0.1:{client.port}"), *MCP_HEADERS.items(), ("Content-Length", str(len(body)))]


@pytest.mark.parametrize("depth", [2_000, 100_000])
def test_deeply_nested_json_is_a_parse_error(step2, depth):
    body = b"[" * depth + b"]" * depth
    status, answer = raw_post(step2, good_headers(step2, body), body)
    assert (status, answer["error"]["code"]) == (400, -32700)
    assert "nested too deeply" in answer["error"]["message"]


def test_a_body_that_is_not_utf8_is_a_parse_error(step2):
    body = json.dumps(rpc("ping")).encode("utf-16")
    status, answer = raw_post(step2, good_headers(step2, body), body)
    assert (status, answer["error"]["code"]) == (400, -32700)


@pytest.mark.parametrize("length", ["\u00b2", "1\u00b2", "1e3", "0x10", "-0"])
def test_a_content_length_that_is_not_plain_digits_is_400(step2, length):
    headers = [h for h in good_headers(step2, b"{}") if h[0] != "Content-Length"] + [("Content-Length", length)]
    status, _ = raw_post(step2, headers, b"{}")
    assert status == 400


# Host and Origin are checked in every copy of http_transport.py (the door fixture).

@pytest.mark.parametrize("host", ["[", "[::1", "evil.example@127.0.0.1", "127.0.0.1:99999999", ""])
def test_a_malformed_host_is_403(door, host):
    headers = [("Host", host), *MCP_HEADERS.items(), ("Content-Length", "2")]
    assert raw_post(door, headers, b"{}")[0] == 403


def test_a_request_without_host_is_403(door):
    """HTTP/1.1 requires Host; without it, nothing says which site the client meant to call."""
    headers = [*MCP_HEADERS.items(), ("Content-Length", "2")]
    assert raw_post(door, headers, b"{}")[0] == 403


@pytest.mark.parametrize("origin", ["http://[", "localhost:3000", "file://", "http://localhost:3000/x"])
def test_a_malformed_origin_is_403(door, origin):
    headers = [*good_headers(door, b"{}"), ("Origin", origin)]
    assert raw_post(door, headers, b"{}")[0] == 403


def test_two_host_headers_are_refused(door):
    headers = [*good_headers(door, b"{}"), ("Host", "evil.example")]
    assert raw_post(door, headers, b"{}")[0] == 403


def test_a_405_names_every_method_the_door_takes(door):
    """Allow lists what this endpoint answers: GET from step 9, which opens its stream."""
    refused = door.request("PUT")
    assert refused.status == 405
    get_refused = door.request("GET", headers={"Accept": "text/event-stream"}).status == 405
    assert set(refused.headers["Allow"].split(", ")) == {"POST", "DELETE"} | (set() if get_refused else {"GET"})


def test_a_tool_name_that_is_not_a_string_is_invalid_params(step2):
    session_id = step2.open_session()
    for name in (["echo"], {"a": 1}, None, 7):
        body = step2.send(session_id, rpc("tools/call", name=name, arguments={})).json()
        assert body["error"] == {"code": -32602, "message": "tools/call needs params.name, a string"}


def test_the_server_survives_all_of_the_above(step2):
    session_id = step2.open_session()
    assert step2.send(session_id, rpc("ping")).json()["result"] == {}
