"""The handshake in order, in every copy of protocol.py over HTTP (stdio: step 3):
initialize, then notifications/initialized, then work. Nothing else opens the tools."""
import pytest

from helpers import CLIENT_INFO, rpc

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
OTHER_NOTIFICATIONS = [
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
    {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
    {"jsonrpc": "2.0", "method": "initialized"},
]


def initialize(version="2025-11-25", id=1):
    return rpc("initialize", id=id, protocolVersion=version, capabilities={}, clientInfo=CLIENT_INFO)


# Over HTTP

@pytest.mark.parametrize("notification", OTHER_NOTIFICATIONS, ids=lambda n: n["method"])
def test_only_notifications_initialized_opens_the_tools(core, notification):
    session_id = core.initialize().headers["Mcp-Session-Id"]
    assert core.send(session_id, notification).status == 202
    assert core.send(session_id, rpc("tools/list", id=2)).json()["error"]["code"] == -32600
    assert core.send(session_id, INITIALIZED).status == 202
    assert "result" in core.send(session_id, rpc("tools/list", id=3)).json()


def test_initialize_sent_as_a_notification_opens_no_session(core):
    notification = {"jsonrpc": "2.0", "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}}
    reply = core.post(notification)
    assert reply.status == 400
    assert "Mcp-Session-Id" in reply.json()["error"]["message"]
    assert "Mcp-Session-Id" not in reply.headers


def test_a_failed_initialize_opens_no_session_that_initialized_could_open(core):
    reply = core.post(rpc("initialize", protocolVersion="2025-11-25"))  # no capabilities, no clientInfo
    assert reply.json()["error"]["code"] == -32602
    assert "Mcp-Session-Id" not in reply.headers


@pytest.mark.parametrize("version", ["2026-07-28", "2027-01-01"])
def test_initialize_never_agrees_to_a_version_without_a_handshake(core, version):
    # 2026-07-28 has no initialize at all: a core that agreed to it in a handshake
    # would promise a session under rules that have none.
    reply = core.post(initialize(version))
    assert reply.json()["result"]["protocolVersion"] == "2025-11-25"
    assert reply.headers["Mcp-Session-Id"]


# Over stdio (step 3): the process is the session, so the order is all there is

def test_stdio_initialized_before_initialize_is_ignored(stdio):
    stdio.send(INITIALIZED)
    assert stdio.ask(initialize())["result"]["protocolVersion"] == "2025-11-25"
    assert stdio.ask(rpc("tools/list", id=2))["error"]["code"] == -32600
    stdio.send(INITIALIZED)
    assert "result" in stdio.ask(rpc("tools/list", id=3))


def test_stdio_initialized_after_a_failed_initialize_opens_nothing(stdio):
    assert stdio.ask(rpc("initialize", protocolVersion="2025-11-25"))["error"]["code"] == -32602
    stdio.send(INITIALIZED)
    assert stdio.ask(rpc("tools/list", id=2))["error"]["code"] == -32600


@pytest.mark.parametrize("notification", OTHER_NOTIFICATIONS, ids=lambda n: n["method"])
def test_stdio_only_notifications_initialized_opens_the_tools(stdio, notification):
    stdio.ask(initialize())
    stdio.send(notification)
    assert stdio.ask(rpc("tools/list", id=2))["error"]["code"] == -32600
    stdio.send(INITIALIZED)
    assert "result" in stdio.ask(rpc("tools/list", id=3))


def test_stdio_initialize_never_agrees_to_the_stateless_version(stdio):
    assert stdio.ask(initialize("2026-07-28"))["result"]["protocolVersion"] == "2025-11-25"
