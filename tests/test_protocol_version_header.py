"""MCP-Protocol-Version on a session's messages (every copy of http_transport.py), and the
-32022 error from step 3 on, whose data tells the client which versions would work."""
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


def test_a_bad_version_header_on_a_notification_is_400(door):
    session_id = door.initialize().headers["Mcp-Session-Id"]
    reply = door.send(session_id, INITIALIZED, {"MCP-Protocol-Version": "1999-01-01"})
    assert reply.status == 400
    # Refused, so it did not complete the handshake either.
    assert door.send(session_id, rpc("tools/list")).json()["error"]["code"] == -32600


def test_a_bad_version_header_on_a_session_request_is_400(door):
    session_id = door.open_session()
    reply = door.send(session_id, rpc("tools/list", id=17), {"MCP-Protocol-Version": "1999-01-01"})
    assert reply.status == 400
    assert reply.json()["id"] == 17


def test_from_step3_a_bad_version_header_on_a_session_request_is_32022_with_its_data(stateless_door):
    session_id = stateless_door.open_session()
    reply = stateless_door.send(session_id, rpc("tools/list", id=17), {"MCP-Protocol-Version": "1999-01-01"})
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32022
    assert reply.json()["error"]["data"] == {"supported": supported_versions(stateless_door), "requested": "1999-01-01"}


def test_from_step3_a_bad_version_header_on_a_notification_is_32022(stateless_door):
    session_id = stateless_door.initialize().headers["Mcp-Session-Id"]
    reply = stateless_door.send(session_id, INITIALIZED, {"MCP-Protocol-Version": "1999-01-01"})
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32022)
    assert reply.json()["error"]["data"] == {"supported": supported_versions(stateless_door), "requested": "1999-01-01"}


def test_from_step3_a_handshake_version_in_meta_is_32022_with_its_data(stateless_door):
    # The header agrees with _meta, so the request reaches the core, which refuses
    # the version: a handshake-era version needs initialize.
    message = rpc("tools/list", id=5, _meta=stateless_meta("2025-11-25"))
    headers = {"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"}
    reply = stateless_door.post(message, headers)
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": supported_versions(stateless_door), "requested": "2025-11-25"}
    assert "send initialize" in error["message"]


def test_from_step3_an_unsupported_version_header_is_32022_before_the_body_is_compared(stateless_door):
    """The header names the version the client speaks: a server that does not speak it
    says so (with the versions it does), rather than that the header and _meta differ."""
    message = rpc("tools/list", id=6, _meta=stateless_meta("2026-07-28"))
    reply = stateless_door.post(message, {"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"})
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": supported_versions(stateless_door), "requested": "2099-01-01"}


@pytest.mark.parametrize("version", ["2025-11-25", "1999-01-01"])
def test_stdio_an_unsupported_version_in_meta_is_32022_with_its_data(stdio, version):
    discover = stdio.ask(rpc("server/discover", id=4, _meta=stateless_meta("2026-07-28")))
    supported = discover["result"]["supportedVersions"]
    answer = stdio.ask(rpc("tools/list", id=5, _meta=stateless_meta(version)))
    assert answer["id"] == 5
    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"] == {"supported": supported, "requested": version}
