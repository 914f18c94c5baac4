"""Step 9 from outside, over HTTP and stdio, on a temporary vault: what the watcher
sees reaches search and backlinks, and clients that asked hear of it, on the GET
stream, on stdio, and on a 2026-07-28 subscriptions/listen stream. The server runs
with the fast intervals of launch.quiet_environment; every wait is bounded."""
import http.client
import json
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import urlsplit

import pytest

from helpers import MCP_HEADERS, McpClient, rpc
from launch import quiet_environment, running_server
from manifest import SAMPLE_VAULT, find_step

STEP = find_step(9)
TIMEOUT = 10.0  # only ever reached when a test fails
STATELESS_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}


def eventually(probe, what: str, timeout: float = TIMEOUT):
    """probe() until it returns something true; fail after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"{what} did not happen within {timeout} s")


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    vault = tmp_path_factory.mktemp("step9") / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    return vault


@pytest.fixture(scope="module")
def server(vault):
    with running_server(STEP.server, "--vault", str(vault)) as (url, _log):
        client = McpClient(url)
        client.session_id = client.open_session()
        yield client


def data(server, name, **arguments) -> dict:
    reply = server.send(server.session_id, rpc("tools/call", name=name, arguments=arguments)).json()
    assert reply["result"]["isError"] is False, reply
    return reply["result"]["structuredContent"]


def found(server, query: str) -> list[str]:
    return [hit["path"] for hit in data(server, "search_vault", query=query, limit=3)["results"]]


def backlinkers(server, path: str) -> set[str]:
    return {link["path"] for link in data(server, "get_backlinks", path=path)["backlinks"]}


class Stream:
    """An open SSE answer (a GET stream, a subscriptions/listen answer), read in a thread."""

    def __init__(self, url: str, method: str, headers: dict, body=None):
        parts = urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
        self.connection.request(method, parts.path, body and json.dumps(body), headers)
        self.response = self.connection.getresponse()
        self.messages, self.ended = queue.Queue(), threading.Event()
        if self.response.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for line in self.response:  # http.client undoes the chunking
                if line.startswith(b"data: "):
                    self.messages.put(json.loads(line[6:]))
        except Exception:  # the test hung up: the reading is over either way
            pass
        self.ended.set()

    def next(self, method: str) -> dict:
        """The next message with this method, skipping the others."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            if message.get("method") == method or (method == "response" and "id" in message):
                return message

    def close(self):
        """Hang up, as a client that is done listening does: the server must notice."""
        try:
            self.connection.sock.shutdown(socket.SHUT_RDWR)  # close() alone leaves the reader's file open
        except (AttributeError, OSError):
            pass
        self.connection.close()


def get_stream(server, session_id=None) -> Stream:
    """The session's GET stream. The one an earlier test hung up may take the server
    a moment to notice (it looks twice a second); until then a second one is 409."""
    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id or server.session_id}
    return eventually(lambda: none_if_conflict(Stream(server.url, "GET", headers)), "a GET stream opened")


def none_if_conflict(stream: Stream) -> Stream | None:
    if stream.response.status != 409:
        return stream
    stream.close()
    return None


def test_a_note_written_by_create_note_is_found_by_search_moments_later(server):
    made = data(server, "create_note", title="Lupin tempeh", content="Lupin beans and quinoxalic spores.")
    assert eventually(lambda: made["path"] in found(server, "quinoxalic lupin"), "the new note in search")


def test_an_edit_shows_in_search_and_in_backlinks(server, vault):
    note = vault / "Kitchen" / "Watched edit.md"
    note.write_text("Nothing here yet.\n")
    eventually(lambda: "Kitchen/Watched edit.md" in found(server, "nothing here yet"), "the note indexed")
    note.write_text("Feeding schedule for the [[Sourdough starter]], zebrawood crock.\n")
    eventually(lambda: "Kitchen/Watched edit.md" in found(server, "zebrawood crock"), "the edit in search")
    eventually(lambda: "Kitchen/Watched edit.md" in backlinkers(server, "Bread/Sourdough starter"),
               "the new link in get_backlinks")


def test_a_rename_and_a_delete_leave_no_trace(server, vault):
    note = vault / "Kitchen" / "Moving note.md"
    note.write_text("Xylophone pickles link to [[Sauerkraut]].\n")
    eventually(lambda: "Kitchen/Moving note.md" in found(server, "xylophone pickles"), "the note indexed")
    note.rename(vault / "Kitchen" / "Moved note.md")
    eventually(lambda: found(server, "xylophone pickles")[:1] == ["Kitchen/Moved note.md"], "the rename in search")
    assert "Kitchen/Moving note.md" not in found(server, "xylophone pickles")
    assert "Kitchen/Moved note.md" in backlinkers(server, "Ferments/Sauerkraut")
    (vault / "Kitchen" / "Moved note.md").unlink()
    eventually(lambda: "Kitchen/Moved note.md" not in found(server, "xylophone pickles"), "the delete in search")
    eventually(lambda: "Kitchen/Moved note.md" not in backlinkers(server, "Ferments/Sauerkraut"),
               "the delete in get_backlinks")


def test_a_subscribed_client_hears_its_note_changed_on_the_get_stream(server, vault):
    reply = server.send(server.session_id, rpc("resources/subscribe", uri="vault:///Bread/Focaccia"))
    assert reply.json()["result"] == {}
    stream = get_stream(server)
    try:
        assert stream.response.status == 200
        assert stream.response.headers["Content-Type"] == "text/event-stream"
        with open(vault / "Bread" / "Focaccia.md", "a") as note:
            note.write("\nDimple it twice.\n")
        message = stream.next("notifications/resources/updated")
        assert message["params"] == {"uri": "vault:///Bread/Focaccia.md"}
    finally:
        stream.close()


def test_notes_that_appear_bring_list_changed(server, vault):
    stream = get_stream(server)
    try:
        (vault / "Inbox" / "Appeared.md").write_text("Hello.\n")
        assert stream.next("notifications/resources/list_changed")["params"] == {}
    finally:
        stream.close()


def test_one_get_stream_per_session_and_it_needs_a_live_session(server):
    refused = server.request("GET", headers={"Accept": "text/event-stream"})
    assert refused.status == 400
    unknown = server.request("GET", headers={"Accept": "text/event-stream", "Mcp-Session-Id": "nope"})
    assert unknown.status == 404
    first = get_stream(server)
    try:
        headers = {"Accept": "text/event-stream", "Mcp-Session-Id": server.session_id}
        assert server.request("GET", headers=headers).status == 409
    finally:
        first.close()


def test_ending_the_session_ends_its_stream(server):
    session_id = server.open_session()
    stream = get_stream(server, session_id)
    assert stream.response.status == 200
    assert server.request("DELETE", headers={"Mcp-Session-Id": session_id}).status == 204
    assert stream.ended.wait(TIMEOUT), "the stream stayed open after DELETE"


def test_the_get_stream_outlives_the_request_deadline(vault):
    with running_server(STEP.server, "--vault", str(vault), "--request-timeout", "1") as (url, _log):
        client = McpClient(url)
        session_id = client.open_session()
        stream = Stream(url, "GET", {"Accept": "text/event-stream", "Mcp-Session-Id": session_id})
        try:
            assert stream.response.status == 200
            time.sleep(2.5)
            assert not stream.ended.is_set(), "the watchdog cut the GET stream"
            (vault / "Inbox" / "After the deadline.md").write_text("Still here.\n")
            assert stream.next("notifications/resources/list_changed")
        finally:
            stream.close()


def test_subscriptions_listen_acknowledges_then_notifies_with_its_id(server, vault):
    headers = {**MCP_HEADERS, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
    body = {"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
            "params": {"_meta": STATELESS_META, "notifications": {
                "resourcesListChanged": True, "toolsListChanged": True,
                "resourceSubscriptions": ["vault:///Ferments/Kimchi.md", "vault:///No such note.md"]}}}
    stream = Stream(server.url, "POST", headers, body)
    try:
        assert stream.response.status == 200
        ack = stream.next("notifications/subscriptions/acknowledged")
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"
        assert ack["params"]["notifications"] == {"resourcesListChanged": True,
                                                  "resourceSubscriptions": ["vault:///Ferments/Kimchi.md"]}
        with open(vault / "Ferments" / "Kimchi.md", "a") as note:
            note.write("\nMore gochugaru.\n")
        updated = stream.next("notifications/resources/updated")
        assert updated["params"]["uri"] == "vault:///Ferments/Kimchi.md"
        assert updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"
    finally:
        stream.close()


def test_discover_declares_subscriptions(server):
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    reply = server.post({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": STATELESS_META}},
                        headers)
    assert reply.json()["result"]["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}


class StdioStep9:
    def __init__(self, vault, index_dir):
        self.process = subprocess.Popen(
            [sys.executable, str(STEP.server), "--stdio", "--vault", str(vault)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=quiet_environment(index_dir),
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(json.loads(line))

    def send(self, message):
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def next(self, method: str) -> dict:
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if message.get("method") == method or (method == "response" and "id" in message):
                return message


@pytest.fixture
def stdio(vault):
    with tempfile.TemporaryDirectory() as index_dir:
        server = StdioStep9(vault, index_dir)
        yield server
        if server.process.poll() is None:
            server.process.kill()
        server.process.wait(timeout=10)


def test_stdio_carries_list_changed_and_updated_as_lines(stdio, vault):
    stdio.send(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t", "version": "1"}))
    assert stdio.next("response")["result"]["capabilities"]["resources"]["subscribe"] is True
    stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    stdio.send(rpc("resources/subscribe", id=2, uri="vault:///Home.md"))
    assert stdio.next("response") == {"jsonrpc": "2.0", "id": 2, "result": {}}
    time.sleep(0.5)  # the watcher starts once the index is open
    (vault / "Inbox" / "Over stdio.md").write_text("A line.\n")
    assert stdio.next("notifications/resources/list_changed")
    with open(vault / "Home.md", "a") as note:
        note.write("\nTouched.\n")
    assert stdio.next("notifications/resources/updated")["params"] == {"uri": "vault:///Home.md"}


def test_stdin_closed_ends_the_process_promptly(stdio):
    stdio.process.stdin.close()
    assert stdio.process.wait(timeout=5) == 0


def test_sigterm_ends_the_http_server_promptly(vault):
    with tempfile.TemporaryDirectory() as index_dir:
        process = subprocess.Popen([sys.executable, str(STEP.server), "--port", "0", "--vault", str(vault)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=quiet_environment(index_dir))
        try:
            eventually(lambda: b"listening" in process.stderr.readline(), "the server listening")
            process.terminate()
            assert process.wait(timeout=5) == 0
        finally:
            if process.poll() is None:
                process.kill()
