"""Origin and Host, steps 2 and 3: a web page must not reach the server, whatever it tries."""
import http.client
import json

import pytest

from helpers import CLIENT_INFO, MCP_HEADERS, McpClient, rpc
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
def test_an_origin_that_is_not_http_is_403(server, origin):
    assert server.post(INITIALIZE, {"Origin": origin}).status == 403


@pytest.mark.parametrize("origin", ["HTTP://LOCALHOST:5173", "http://LocalHost", "https://127.0.0.1"])
def test_a_local_origin_in_any_case_is_allowed(server, origin):
    assert server.post(INITIALIZE, {"Origin": origin}).status == 200


def test_a_host_in_capitals_is_allowed(server):
    # Host names are case-insensitive: LOCALHOST is localhost.
    assert server.post(INITIALIZE, {"Host": f"LOCALHOST:{server.port}"}).status == 200


@pytest.mark.parametrize("second", ["https://evil.example", "http://localhost:5173"])
def test_two_origin_headers_are_403_even_when_the_first_is_local(server, second):
    assert post_with_headers(server, [("Origin", "http://localhost:5173"), ("Origin", second)]) == 403


def test_a_foreign_origin_cannot_end_a_session(server):
    session_id = server.open_session()
    reply = server.request("DELETE", headers={"Mcp-Session-Id": session_id, "Origin": "https://evil.example"})
    assert reply.status == 403
    assert server.send(session_id, rpc("ping")).json()["result"] == {}  # the session lives on


def test_a_foreign_host_cannot_end_a_session(server):
    session_id = server.open_session()
    reply = server.request("DELETE", headers={"Mcp-Session-Id": session_id, "Host": "evil.example"})
    assert reply.status == 403
    assert server.send(session_id, rpc("ping")).json()["result"] == {}


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH"])
def test_other_methods_check_the_host_too(server, method):
    assert server.request(method, headers={"Host": "evil.example"}).status == 403


# --host: the address the server binds is a name it answers to, and only that is added

@pytest.fixture(params=[2, 3], ids=["step2", "step3"])
def bound_elsewhere(request):
    """The step bound to 127.0.0.2: a loopback address, but not one of the usual names."""
    with running_server(find_step(request.param).server, "--host", "127.0.0.2") as (url, _log):
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
