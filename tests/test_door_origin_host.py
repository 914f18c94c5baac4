"""Origin and Host, in every copy of http_transport.py: a web page must not reach the server,
whatever it tries."""
import http.client
import json

import pytest

from helpers import CLIENT_INFO, MCP_HEADERS, McpClient, distinct_copies, rpc
from launch import running_server
from manifest import find_step

INITIALIZE = rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO)


def post_with_headers(client, headers: list[tuple[str, str]], message=INITIALIZE) -> int:
    """POST with a header list that may repeat a name (a dict cannot); return the status."""
    body = json.dumps(message).encode()
    connection = http.client.HTTPConnection(client.host, client.port, timeout=10)
    try:
        connection.putrequest("POST", "/mcp")
        for name, value in [*MCP_HEADERS.items(), *headers, ("Content-Length", str(len(body)))]:
            connection.putheader(name, value)
        connection.endheaders(body)
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.mark.parametrize(
    "origin", ["ftp://localhost", "ws://localhost:3000", "file://localhost", "chrome-extension://localhost"]
)
def test_an_origin_that_is_not_http_is_403(door, origin):
    assert door.post(INITIALIZE, {"Origin": origin}).status == 403


@pytest.mark.parametrize("origin", ["HTTP://LOCALHOST:5173", "http://LocalHost", "https://127.0.0.1"])
def test_a_local_origin_in_any_case_is_allowed(door, origin):
    assert door.post(INITIALIZE, {"Origin": origin}).status == 200


def test_a_host_in_capitals_is_allowed(door):
    # Host names are case-insensitive: LOCALHOST is localhost.
    assert door.post(INITIALIZE, {"Host": f"LOCALHOST:{door.port}"}).status == 200


@pytest.mark.parametrize("second", ["https://evil.example", "http://localhost:5173"])
def test_two_origin_headers_are_403_even_when_the_first_is_local(door, second):
    assert post_with_headers(door, [("Origin", "http://localhost:5173"), ("Origin", second)]) == 403


def test_a_foreign_origin_cannot_end_a_session(door):
    session_id = door.open_session()
    reply = door.request("DELETE", headers={"Mcp-Session-Id": session_id, "Origin": "https://evil.example"})
    assert reply.status == 403
    assert door.send(session_id, rpc("ping")).json()["result"] == {}  # the session lives on


def test_a_foreign_host_cannot_end_a_session(door):
    session_id = door.open_session()
    reply = door.request("DELETE", headers={"Mcp-Session-Id": session_id, "Host": "evil.example"})
    assert reply.status == 403
    assert door.send(session_id, rpc("ping")).json()["result"] == {}


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH"])
def test_other_methods_check_the_host_too(door, method):
    assert door.request(method, headers={"Host": "evil.example"}).status == 403


# --host: the address the server binds is a name it answers to, and only that is added

@pytest.fixture(params=distinct_copies("http_transport.py"), ids=lambda number: f"step{number}")
def bound_elsewhere(request, tmp_path):
    """The step bound to 127.0.0.2: a loopback address, but not one of the usual names."""
    step = find_step(request.param)
    vault = ["--vault", str(tmp_path)] if step.vault else []
    with running_server(step.server, "--host", "127.0.0.2", *vault) as (url, _log):
        assert url.startswith("http://127.0.0.2:")
        yield McpClient(url)


def test_the_bound_address_is_an_allowed_host_and_origin(bound_elsewhere):
    client = bound_elsewhere
    assert client.post(INITIALIZE).status == 200  # Host: 127.0.0.2:PORT, as http.client sends it
    assert client.post(INITIALIZE, {"Origin": "http://127.0.0.2:5173"}).status == 200


def test_binding_elsewhere_still_refuses_foreign_hosts_and_origins(bound_elsewhere):
    client = bound_elsewhere
    assert client.post(INITIALIZE, {"Host": "evil.example"}).status == 403
    assert client.post(INITIALIZE, {"Origin": "https://evil.example"}).status == 403
    assert client.post(INITIALIZE, {"Host": "127.0.0.3"}).status == 403
    assert client.post(INITIALIZE, {"Host": f"localhost:{client.port}"}).status == 200
