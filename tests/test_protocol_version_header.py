"""MCP-Protocol-Version on a session's messages (steps 2 and 3), and the -32022 error
of step 3, whose data tells the client which versions would work."""
import pytest

from helpers import CLIENT_INFO, rpc

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def stateless_meta(version):
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }


def supported_versions(client) -> list[str]:
    """The versions step 3 names in server/discover: -32022 must name the same."""
    discover = rpc("server/discover", _meta=stateless_meta("2026-07-28"))
    reply = client.post(discover, {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
    versions = reply.json()["result"]["supportedVersions"]
    assert "2026-07-28" in versions and "2025-11-25" in versions
    return versions


def test_a_bad_version_header_on_a_notification_is_400(server):
    session_id = server.initialize().headers["Mcp-Session-Id"]
    reply = server.send(session_id, INITIALIZED, {"MCP-Protocol-Version": "1999-01-01"})
    assert reply.status == 400
    # Refused, so it did not complete the handshake either.
    assert server.send(session_id, rpc("tools/list")).json()["error"]["code"] == -32600


def test_a_bad_version_header_on_a_session_request_is_400(server):
    session_id = server.open_session()
    reply = server.send(session_id, rpc("tools/list", id=17), {"MCP-Protocol-Version": "1999-01-01"})
    assert reply.status == 400
    assert reply.json()["id"] == 17


def test_step3_a_bad_version_header_on_a_session_request_is_32022_with_its_data(step3):
    session_id = step3.open_session()
    reply = step3.send(session_id, rpc("tools/list", id=17), {"MCP-Protocol-Version": "1999-01-01"})
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32022
    assert reply.json()["error"]["data"] == {"supported": supported_versions(step3), "requested": "1999-01-01"}


def test_step3_a_bad_version_header_on_a_notification_is_32022(step3):
    session_id = step3.initialize().headers["Mcp-Session-Id"]
    reply = step3.send(session_id, INITIALIZED, {"MCP-Protocol-Version": "1999-01-01"})
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32022)
    assert reply.json()["error"]["data"] == {"supported": supported_versions(step3), "requested": "1999-01-01"}


def test_step3_a_handshake_version_in_meta_is_32022_with_its_data(step3):
    # The header agrees with _meta, so the request reaches the core, which refuses
    # the version: a handshake-era version needs initialize.
    message = rpc("tools/list", id=5, _meta=stateless_meta("2025-11-25"))
    headers = {"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"}
    reply = step3.post(message, headers)
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": supported_versions(step3), "requested": "2025-11-25"}
    assert "send initialize" in error["message"]


@pytest.mark.parametrize("version", ["2025-11-25", "1999-01-01"])
def test_stdio_an_unsupported_version_in_meta_is_32022_with_its_data(stdio, version):
    discover = stdio.ask(rpc("server/discover", id=4, _meta=stateless_meta("2026-07-28")))
    supported = discover["result"]["supportedVersions"]
    answer = stdio.ask(rpc("tools/list", id=5, _meta=stateless_meta(version)))
    assert answer["id"] == 5
    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"] == {"supported": supported, "requested": version}
