"""No client can take the server from the others: slow and idle connections make
way, slow bodies hold no turn in the large-body lane, and long-lived streams draw
on a budget of their own.

Each test runs one attack against a real server with small limits (a handful of
connection slots, a deadline of a few seconds) while a normal client sends
requests, each on a new connection, and times them. A request that waits for a
free slot or turn takes seconds, or gets 503; one served at once takes
milliseconds. The bound asserted, one second, is loose because the machine is
shared; the p99 measured is printed (pytest -s shows it).
"""
import itertools
import json
import select
import socket
import threading
import time
from contextlib import contextmanager

import pytest

from helpers import CLIENT_INFO, MCP_HEADERS, McpClient, distinct_copies, rpc
from launch import running_server
from manifest import find_step

# The distinct copies of http_transport.py: every later step's is one of these.
DOOR_STEPS = [find_step(2), find_step(3), find_step(7), find_step(9)]
STREAM_STEPS = [find_step(9)]  # step 10's copy is the same file
# server.py hands --max-streams to the limits: each copy of it that runs streams.
STREAM_SERVER_STEPS = [find_step(number) for number in distinct_copies("server.py", since=9)]
ATTACK_SECONDS = 4.0
STATELESS_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                  "io.modelcontextprotocol/clientCapabilities": {}}


@contextmanager
def server(step, tmp_path, *flags):
    """The step's server with small limits, on a one-note vault when it takes one."""
    args = list(flags)
    if step.vault:
        vault = tmp_path / "vault"
        vault.mkdir(exist_ok=True)
        (vault / "Note.md").write_text("A note.\n")
        args += ["--vault", str(vault)]
    with running_server(step.server, *args) as (url, log_path):
        yield McpClient(url), log_path


def initialize_body(padding: int = 0) -> bytes:
    message = rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO)
    return json.dumps(message).encode() + b" " * padding  # spaces after JSON are still JSON


def request_bytes(port: int, body: bytes, method="POST", headers: dict | None = None) -> bytes:
    lines = [f"{method} /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    all_headers = {**MCP_HEADERS, "Content-Length": str(len(body)), **(headers or {})}
    lines += [f"{name}: {value}" for name, value in all_headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def timed_requests(port: int, body: bytes, count: int = 20) -> list[tuple[float, bytes]]:
    """count requests, one after another, each on a new connection: (seconds, status line)."""
    results = []
    for _ in range(count):
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(request_bytes(port, body))
            status = status_line(sock)
        results.append((time.monotonic() - started, status))
        time.sleep(0.05)
    return results


def status_line(sock: socket.socket) -> bytes:
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(1024)
            if not chunk:
                break
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data.split(b"\r\n")[0]


def assert_served_at_once(results, what: str):
    seconds = sorted(elapsed for elapsed, _ in results)
    p99 = seconds[min(len(seconds) - 1, int(len(seconds) * 0.99))]
    print(f"\n{what}: {len(results)} requests, p99 {p99 * 1000:.0f} ms, max {seconds[-1] * 1000:.0f} ms")
    refused = [status for _, status in results if not status.startswith(b"HTTP/1.1 200")]
    assert not refused, f"{what}: a normal client was refused: {refused[:3]}"
    assert seconds[-1] < 1.0, f"{what}: a normal client waited {seconds[-1]:.1f} s"


class Attack:
    """Threads that each keep one connection busy doing `move` until told to stop;
    when the server closes a connection, the thread opens another, as an attacker would."""

    def __init__(self, port: int, connections: int, move):
        self.port, self.move, self.stopped = port, move, threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(connections)]

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        time.sleep(1.0)  # every slot is taken by now
        return self

    def __exit__(self, *_):
        self.stopped.set()
        for thread in self.threads:
            thread.join(timeout=10)

    def _run(self):
        deadline = time.monotonic() + 3 * ATTACK_SECONDS  # bounded even if nobody stops it
        while not self.stopped.is_set() and time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                    self.move(sock, self.stopped)
            except OSError:
                pass  # cut off: come back at once
            self.stopped.wait(0.05)


def drip(data: bytes, interval: float):
    """Send data a byte at a time, one byte every interval, while the server reads."""
    def move(sock, stopped):
        for byte in data:
            if stopped.is_set():
                return
            sock.sendall(bytes([byte]))
            if stopped.wait(interval):
                return
    return move


def hold_open(sock, stopped):
    stopped.wait(ATTACK_SECONDS * 3)


def idle_after_a_request(sock, stopped):
    """Keep-alive: one whole request, its answer, then nothing."""
    sock.sendall(request_bytes(sock.getpeername()[1], initialize_body()))
    if status_line(sock).startswith(b"HTTP/1.1 200"):
        stopped.wait(ATTACK_SECONDS * 3)


# Slow and idle connections

@pytest.mark.parametrize("step", DOOR_STEPS, ids=lambda s: s.folder)
def test_slow_and_idle_clients_in_every_slot_do_not_keep_out_a_normal_client(step, tmp_path):
    """Twice as many attackers as slots: some send nothing, some go quiet after one
    request, the rest send a byte every half second. A new connection takes the
    slot of the one that has waited longest."""
    with server(step, tmp_path, "--max-connections", "8", "--request-timeout", "3") as (client, log_path):
        slow = drip(request_bytes(client.port, initialize_body()), interval=0.5)
        with Attack(client.port, 5, hold_open), Attack(client.port, 5, idle_after_a_request), \
                Attack(client.port, 6, slow):
            results = timed_requests(client.port, initialize_body())
        assert_served_at_once(results, f"{step.folder}, 16 slow and idle clients, 8 slots")
        assert "Traceback" not in log_path.read_text()


# Slow large bodies

@pytest.mark.parametrize("step", DOOR_STEPS, ids=lambda s: s.folder)
def test_slow_large_bodies_do_not_hold_the_large_body_lane(step, tmp_path):
    """Four clients announce 4 MB and send a byte every half second. A body takes
    its turn to be parsed once it has arrived, so they hold none."""
    with server(step, tmp_path, "--request-timeout", "3") as (client, log_path):
        announced = request_bytes(client.port, b"x" * (4 * 1024 * 1024 - 100))
        head = announced[: announced.index(b"\r\n\r\n") + 4]
        def slow_body(sock, stopped):
            sock.sendall(head)
            drip(b"{" * 100, 0.5)(sock, stopped)
        with Attack(client.port, 4, slow_body):
            results = timed_requests(client.port, initialize_body(padding=20_000))
        assert_served_at_once(results, f"{step.folder}, 4 slow 4 MB bodies, 20 KB requests")
        assert "Traceback" not in log_path.read_text()


@pytest.mark.parametrize("step", DOOR_STEPS, ids=lambda s: s.folder)
def test_a_body_that_keeps_trickling_is_cut_at_the_request_deadline(step, tmp_path):
    """The deadline is for the whole request, not for each byte: a body that is
    always on its way still ends in 408 when its time is up."""
    with server(step, tmp_path, "--request-timeout", "1") as (client, _log):
        body = initialize_body(padding=100)
        announced = request_bytes(client.port, body)
        with socket.create_connection(("127.0.0.1", client.port), timeout=5) as sock:
            sock.sendall(announced[: -len(body)])
            started = time.monotonic()
            for byte in body[:30]:  # 30 bytes, one every 0.1 s: 3 s if nobody stops it
                sock.sendall(bytes([byte]))
                if select.select([sock], [], [], 0.1)[0]:
                    break  # the server answered: stop, so that the answer is not reset away
            assert time.monotonic() - started < 2.5
            assert status_line(sock) == b"HTTP/1.1 408 Request Timeout"


# Long-lived streams

def listen_request(port: int) -> bytes:
    body = {"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
            "params": {"_meta": STATELESS_META, "notifications": {"resourcesListChanged": True}}}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
    return request_bytes(port, json.dumps(body).encode(), headers=headers)


def get_stream_request(port: int, session_id: str) -> bytes:
    lines = ["GET /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Accept: text/event-stream",
             f"Mcp-Session-Id: {session_id}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def stream(request_for, opened: list):
    """Open a stream, read its status, and hold it without reading more. A refused
    stream (503, "try again later") is asked again a second later: refused streams
    asked again at once would be a flood of requests, which no slots can hold off,
    and this test is about the streams that are open."""
    def move(sock, stopped):
        sock.sendall(request_for())
        if status_line(sock).startswith(b"HTTP/1.1 200"):
            opened.append(1)
            stopped.wait(ATTACK_SECONDS * 3)
        else:
            stopped.wait(1.0)
    return move


@pytest.mark.parametrize("step", STREAM_STEPS, ids=lambda s: s.folder)
@pytest.mark.parametrize("kind", ["listen", "GET"])
def test_streams_beyond_the_connection_slots_do_not_keep_out_a_normal_client(step, kind, tmp_path):
    """Twelve streams, where 4 slots answer requests and 8 streams may be open:
    streams draw on their own budget, and the slots stay free for requests."""
    flags = ("--max-connections", "4", "--max-streams", "8")
    with server(step, tmp_path, *flags) as (client, log_path):
        if kind == "listen":
            request_for = lambda: listen_request(client.port)  # noqa: E731
        else:
            sessions = itertools.cycle([client.initialize().headers["Mcp-Session-Id"] for _ in range(12)])
            request_for = lambda: get_stream_request(client.port, next(sessions))  # noqa: E731
        opened = []
        with Attack(client.port, 12, stream(request_for, opened)):
            results = timed_requests(client.port, initialize_body())
        assert_served_at_once(results, f"{step.folder}, 12 {kind} streams, 4 slots, 8 streams")
        assert len(opened) >= 8, f"only {len(opened)} streams opened: the attack did not run"
        assert "Traceback" not in log_path.read_text()


@pytest.mark.parametrize("step", STREAM_SERVER_STEPS, ids=lambda s: s.folder)
def test_a_stream_beyond_the_budget_gets_503_and_a_closed_one_frees_its_place(step, tmp_path):
    with server(step, tmp_path, "--max-streams", "2") as (client, _log):
        session_id = client.initialize().headers["Mcp-Session-Id"]
        held = []
        for request in (listen_request(client.port), get_stream_request(client.port, session_id)):
            sock = socket.create_connection(("127.0.0.1", client.port), timeout=5)
            sock.sendall(request)
            assert status_line(sock) == b"HTTP/1.1 200 OK"
            held.append(sock)
        refused = socket.create_connection(("127.0.0.1", client.port), timeout=5)
        refused.sendall(listen_request(client.port))
        answer = b""
        while chunk := refused.recv(65536):  # the server closes after a refusal
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 503"), answer[:80]
        assert b'"id": "listen"' in answer and b"too many streams" in answer
        held.pop().close()  # the GET stream ends; the server notices within a second
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with socket.create_connection(("127.0.0.1", client.port), timeout=5) as again:
                again.sendall(listen_request(client.port))
                if status_line(again) == b"HTTP/1.1 200 OK":
                    break
            time.sleep(0.2)
        else:
            pytest.fail("a closed stream never gave its place back")
        for sock in held:
            sock.close()
