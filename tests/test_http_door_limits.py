"""The HTTP door holds under load, slow clients and malformed HTTP, in every copy of
http_transport.py (steps 2, 3, 7 and 9; the later steps' copies are the same file).

Each test that needs limits made small (a one-second request deadline, a handful of
connections) starts a server of its own, so a slow client is simulated in a second
or two instead of the default ten; the others share one server per step. Every loop
here is bounded.
"""
import http.client
import json
import os
import re
import resource
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from helpers import CLIENT_INFO, MCP_HEADERS, McpClient, distinct_copies, rpc
from launch import quiet_environment, wait_for_url
from manifest import find_step

STEPS = [find_step(number) for number in distinct_copies("http_transport.py")]
STDIO_STEPS = [find_step(number) for number in distinct_copies("stdio_transport.py")]
# server.py hands the command line's limits to the door: the copies of steps whose door
# the tests above do not start already.
WIRING_STEPS = [find_step(number) for number in distinct_copies("server.py", since=2)
                if number not in distinct_copies("http_transport.py")]
LIMITS_STEPS = [find_step(number) for number in distinct_copies("limits.py")]
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
BIG_TEXT = "x" * 3_000_000  # an answer that takes the server a while to write to a slow reader


def folder(step) -> str:
    return step.folder


@contextmanager
def server(step, *args, preexec_fn=None):
    """A step's server with the given flags; yields (client, port, log path).
    Its process id is in client.pid, for the tests that pause it or read its memory.
    A step that reads a vault gets one of its own (see make_vault)."""
    log_path = Path(tempfile.mkstemp(suffix=".log")[1])
    with tempfile.TemporaryDirectory() as scratch, open(log_path, "w") as log:
        process = subprocess.Popen([sys.executable, str(step.server), "--port", "0", *vault_args(step, scratch), *args],
                                   stdout=log, stderr=subprocess.STDOUT, preexec_fn=preexec_fn,
                                   env=quiet_environment(scratch))
        try:
            url = wait_for_url(process, log_path, 10)
            client = McpClient(url)
            client.pid = process.pid
            yield client, client.port, log_path
        finally:
            process.kill()
            process.wait()
            log_path.unlink(missing_ok=True)


def vault_args(step, scratch: str) -> list[str]:
    """--vault and a vault in scratch for a step that reads one: a note for each text the
    tests ask for (see tool_call), and one big note."""
    if not step.vault:
        return []
    vault = Path(scratch) / "vault"
    vault.mkdir()
    for text in ("plain", "streamed", "framed", "in a batch", "batched"):
        (vault / f"{text}.md").write_text(f"{text}\n")
    # 900 kB, under the 1 MiB cap; each quote is sent as \" twice over, so the answer is 5 MB
    (vault / "big.md").write_text(('"' * 99 + "\n") * 9000)
    return ["--vault", str(vault)]


@pytest.fixture(scope="module")
def running():
    """Each step's server with no flags, started when a test first asks for it and shared
    by the tests of this file that need no limits of their own."""
    with ExitStack() as stack:
        servers = {}

        def start(step):
            if step.number not in servers:
                servers[step.number] = stack.enter_context(server(step))
            return servers[step.number]

        yield start


def tool_call(step, text: str, id=2) -> dict:
    """A tools/call whose answer holds text: echo in steps 2-3; from step 4, get_note of
    the note named text (vault_args wrote it), or of the big note for BIG_TEXT."""
    if not step.vault:
        return rpc("tools/call", id=id, name="echo", arguments={"text": text})
    arguments = {"path": "big.md" if text == BIG_TEXT else f"{text}.md"}
    if step.number >= 4:  # get_note answers a long note in parts: ask for the largest part
        arguments["maxChars"] = 1_000_000
    return rpc("tools/call", id=id, name="get_note", arguments=arguments)


def raw_request(port: int, body: bytes, headers: dict | None = None) -> bytes:
    """An HTTP/1.1 POST as bytes, every header the caller's choice."""
    lines = [f"POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    default = {**MCP_HEADERS, "Content-Length": str(len(body))}
    lines += [f"{name}: {value}" for name, value in {**default, **(headers or {})}.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_all(sock: socket.socket, seconds: float = 5.0) -> bytes:
    """Everything the server sends until it closes the connection (or time runs out)."""
    sock.settimeout(seconds)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except (TimeoutError, ConnectionResetError):
        pass
    return b"".join(chunks)


def open_session(client: McpClient, version="2025-11-25") -> str:
    session_id = client.initialize(version).headers["Mcp-Session-Id"]
    assert client.post(INITIALIZED, {"Mcp-Session-Id": session_id}).status == 202
    return session_id


# Under load and slow clients

@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_a_burst_of_connections_waits_in_the_listen_backlog_instead_of_being_dropped(running, step):
    """With the server paused, the kernel alone completes connections: up to the
    backlog. The standard library's backlog of 5 would leave most of these hanging."""
    client, port, _log = running(step)
    os.kill(client.pid, signal.SIGSTOP)
    sockets = []
    try:
        for _ in range(200):
            sock = socket.create_connection(("127.0.0.1", port), timeout=3)
            sockets.append(sock)
    finally:
        os.kill(client.pid, signal.SIGCONT)
    for sock in sockets:
        sock.sendall(raw_request(port, json.dumps(rpc("ping")).encode()))
    answers = [read_first_response(sock) for sock in sockets]
    assert all(answer.startswith(b"HTTP/1.1 400") for answer in answers)  # no session, but served


def read_first_response(sock: socket.socket) -> bytes:
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    return data


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_when_every_slot_is_busy_answering_a_client_gets_503_at_once_and_a_free_slot_serves_again(step):
    """Idle connections make way for new ones (tests/test_connection_budget.py); a
    connection being answered never does. Four clients that do not read a large
    answer keep the server writing to them."""
    with server(step, "--max-connections", "4", "--request-timeout", "2") as (client, port, _log):
        session_id = open_session(client)
        headers = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
        busy = []
        for _ in range(4):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", port))
            sock.sendall(raw_request(port, json.dumps(tool_call(step, BIG_TEXT)).encode(), headers))
            busy.append(sock)
        busy[0].settimeout(10)  # a loaded machine may take a while to begin: wait for the first answer,
        assert busy[0].recv(1), "a busy client got no answer"
        time.sleep(0.5)  # then the server is writing to all four, or holds them waiting their turn
        refused = client.initialize()
        assert refused.status == 503
        assert refused.headers["Retry-After"] == "1"
        assert "too many connections" in refused.json()["error"]["message"]
        for sock in busy:
            sock.close()
        assert served_within(client, 5), "no slot came free after the busy clients left"


@pytest.mark.parametrize("step", LIMITS_STEPS, ids=folder)
def test_a_new_client_takes_the_slot_of_the_connection_that_has_waited_longest(step):
    """Every slot held by an idle connection: the one idle longest makes way, not the
    newest (which may be a client about to send its request)."""
    with server(step, "--max-connections", "2") as (client, port, _log):
        oldest = socket.create_connection(("127.0.0.1", port))
        time.sleep(0.3)  # each waits for its request now, the oldest a little longer
        newest = socket.create_connection(("127.0.0.1", port))
        time.sleep(0.3)
        assert client.initialize().status == 200  # served at once, in someone's slot
        assert sock_closed(oldest), "the oldest idle connection was kept"
        assert not sock_closed(newest), "the newest idle connection was cut"
        oldest.close()
        newest.close()


def served_within(client: McpClient, seconds: float) -> bool:
    """A handler may still be working out an answer nobody reads: its slot frees when it ends."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if client.initialize().status == 200:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_a_client_sending_one_byte_at_a_time_is_cut_off_at_the_request_deadline(step):
    """A socket timeout restarts with every byte; the deadline covers the whole request."""
    with server(step, "--request-timeout", "1") as (client, port, _log):
        request = raw_request(port, json.dumps(rpc("ping")).encode())
        sock = socket.create_connection(("127.0.0.1", port))
        started = time.monotonic()
        cut_off = False
        for byte in request[:60]:  # 60 bytes, one every 0.1 s: 6 s if nobody stops it
            try:
                sock.send(bytes([byte]))
            except OSError:
                cut_off = True
                break
            if sock_closed(sock):
                cut_off = True
                break
            time.sleep(0.1)
        assert cut_off, "the server still read the drip after 6 s"
        assert time.monotonic() - started < 5
        sock.close()
        assert client.initialize().status == 200  # and it still serves others


def sock_closed(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_a_body_shorter_than_its_content_length_gets_408_not_500(step):
    with server(step, "--request-timeout", "0.5") as (client, port, log_path):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(raw_request(port, b'{"jsonrpc"', {"Content-Length": "100"}))
        answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
        assert b"within 0.5 s" in answer
        assert "Traceback" not in log_path.read_text()


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_a_body_that_ends_before_its_content_length_is_refused_not_served(running, step):
    """The client sends less than it announced and closes its side: the read comes back
    short at once, and a short body is no message, however much of it parses."""
    client, port, log_path = running(step)
    sock = socket.create_connection(("127.0.0.1", port))
    body = json.dumps(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO))
    sock.sendall(raw_request(port, body.encode(), {"Content-Length": str(len(body) + 10)}))
    sock.shutdown(socket.SHUT_WR)
    answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:80]
    assert b"ended before Content-Length" in answer
    assert b"Mcp-Session-Id" not in answer


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads CPU time from /proc")
@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_running_out_of_file_descriptors_is_logged_and_does_not_spin(step):
    def few_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))

    with server(step, preexec_fn=few_files) as (client, port, log_path):
        wait_until_idle(client.pid)  # a step with a vault builds its index first: not the loop's CPU
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(60)]
        time.sleep(0.3)
        before = cpu_seconds(client.pid)
        time.sleep(1)
        assert cpu_seconds(client.pid) - before < 0.5, "the accept loop spins"
        warnings = log_path.read_text().count("out of file descriptors")
        assert 1 <= warnings <= 6, f"{warnings} warnings in 1.3 s: the accept loop does not pause"
        for sock in held:
            sock.close()
        assert served_within(client, 5)


def wait_until_idle(pid: int, within: float = 20) -> None:
    """Until the process uses almost no CPU for 0.3 s."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(0.3)
        if cpu_seconds(pid) - before < 0.05:
            return
    pytest.fail(f"the server was still busy after {within} s")


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_clients_that_reset_their_connections_leave_no_tracebacks(running, step):
    client, port, log_path = running(step)
    for i in range(20):
        sock = socket.create_connection(("127.0.0.1", port))
        if i % 2:  # half of them send a request first and leave before the answer
            sock.sendall(raw_request(port, json.dumps(rpc("ping")).encode()))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # linger 0: a reset, not a polite close
    time.sleep(0.5)
    assert client.initialize().status == 200
    assert "Traceback" not in log_path.read_text()


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_a_client_that_stops_reading_gets_one_response_never_a_second_status_line(step):
    with server(step, "--request-timeout", "1") as (client, port, log_path):
        session_id = open_session(client)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        body = json.dumps(tool_call(step, BIG_TEXT)).encode()
        headers = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
        sock.sendall(raw_request(port, body, headers))
        time.sleep(2.5)  # the server's write times out meanwhile
        answer = read_all(sock)
        assert answer.count(b"HTTP/1.1 ") == 1
        assert b"500 Internal" not in answer
        assert "Traceback" not in log_path.read_text()


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_idle_sessions_expire_and_their_clients_get_404(step):
    with server(step, "--session-timeout", "0.5") as (client, port, _log):
        session_id = open_session(client)
        assert client.send(session_id, rpc("ping")).status == 200
        time.sleep(0.8)
        expired = client.send(session_id, rpc("ping"))
        assert expired.status == 404
        assert "expired" in expired.json()["error"]["message"]


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_a_full_session_table_drops_the_least_recently_used_session(step):
    with server(step, "--max-sessions", "3") as (client, port, _log):
        first, second, third = (open_session(client) for _ in range(3))
        assert client.send(first, rpc("ping")).status == 200  # first is now the most recent
        fourth = open_session(client)
        assert client.send(second, rpc("ping")).status == 404
        for session_id in (first, third, fourth):
            assert client.send(session_id, rpc("ping")).status == 200


@pytest.mark.parametrize("step", WIRING_STEPS, ids=folder)
def test_the_limits_on_the_command_line_reach_the_door(step):
    """The three tests above, in one server, for each server.py whose door is one of theirs."""
    flags = ("--request-timeout", "0.5", "--max-sessions", "2", "--session-timeout", "1.5")
    with server(step, *flags) as (client, port, _log):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(raw_request(port, b'{"jsonrpc"', {"Content-Length": "100"}))
        assert read_all(sock).startswith(b"HTTP/1.1 408"), "--request-timeout did not reach the door"
        first, second, third = (open_session(client) for _ in range(3))
        assert client.send(first, rpc("ping")).status == 404, "--max-sessions did not reach the door"
        assert client.send(third, rpc("ping")).status == 200
        time.sleep(1.8)
        assert client.send(third, rpc("ping")).status == 404, "--session-timeout did not reach the door"


# Malformed HTTP

@pytest.mark.parametrize("step", STEPS, ids=folder)
@pytest.mark.parametrize(
    "length,status",
    [("9" * 5000, 413), ("0" * 40 + "5", 400), ("-1", 400), ("1e3", 400)],
    ids=["5000 digits", "leading zeros", "negative", "float"],
)
def test_odd_content_lengths_get_a_clear_status_not_500(running, step, length, status):
    client, port, log_path = running(step)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(raw_request(port, b'{"a": 1}', {"Content-Length": length}))
    answer = read_all(sock, 3)
    assert answer.startswith(f"HTTP/1.1 {status}".encode()), answer[:80]
    assert "Traceback" not in log_path.read_text()


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_two_different_content_lengths_are_refused(running, step):
    client, port, _log = running(step)
    sock = socket.create_connection(("127.0.0.1", port))
    request = raw_request(port, json.dumps(rpc("ping")).encode())
    request = request.replace(b"\r\n\r\n", b"\r\nContent-Length: 3\r\n\r\n", 1)
    sock.sendall(request)
    answer = read_all(sock, 3)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:80]
    assert b"two different Content-Length" in answer


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_a_chunked_request_body_is_refused_with_411_even_with_a_content_length(running, step):
    """Both headers at once is how requests are smuggled past proxies: never guess."""
    client, port, _log = running(step)
    sock = socket.create_connection(("127.0.0.1", port))
    head = raw_request(port, b"", {"Content-Length": "5"})[:-2]
    sock.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
    assert read_all(sock, 3).startswith(b"HTTP/1.1 411")


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_control_characters_from_the_client_are_escaped_in_the_log(running, step):
    client, port, log_path = running(step)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /mcp\x1b[31mred\rforged HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
    assert read_all(sock, 3).startswith(b"HTTP/1.1 400")  # a request line must not hold a CR
    log_text = log_path.read_text()
    assert "\x1b" not in log_text and "\rforged" not in log_text
    assert "\\x1b[31mred\\rforged" in log_text


@pytest.mark.parametrize("step", STEPS, ids=folder)
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(running, step, constant):
    client, port, _log = running(step)
    reply = client.post(f'{{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {{"x": {constant}}}}}')
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32700


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_accept_is_matched_without_regard_to_case(running, step):
    client, port, _log = running(step)
    initialize = rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO)
    reply = client.post(initialize, {"Accept": "Application/JSON, Text/Event-Stream"})
    assert reply.status == 200


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_spaces_around_a_session_id_are_not_part_of_it(running, step):
    client, port, _log = running(step)
    session_id = open_session(client)
    sock = socket.create_connection(("127.0.0.1", port))
    headers = {"Mcp-Session-Id": f"  {session_id}  ", "MCP-Protocol-Version": " 2025-11-25 "}
    sock.sendall(raw_request(port, json.dumps(rpc("ping")).encode(), headers))
    assert read_first_response(sock).startswith(b"HTTP/1.1 200")


# HTTP/1.1

@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_one_connection_carries_many_requests_including_a_stream(running, step):
    client, port, _log = running(step)
    session_id = open_session(client)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    headers = {**MCP_HEADERS, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    streamed = tool_call(step, "streamed", id=3)
    streamed["params"]["_meta"] = {"progressToken": "p"}
    for message in (rpc("ping"), streamed, tool_call(step, "plain", id=4)):
        connection.request("POST", "/mcp", json.dumps(message), headers)
        sock = connection.sock
        response = connection.getresponse()
        body = response.read()
        assert response.status == 200 and response.version == 11
        assert not response.will_close
        assert connection.sock is sock  # the same socket, not a new connection
    assert "plain" in json.loads(body)["result"]["content"][0]["text"]
    connection.close()


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_an_sse_stream_is_chunked_and_ends_with_the_empty_chunk(running, step):
    client, port, _log = running(step)
    session_id = open_session(client)
    message = tool_call(step, "framed")
    message["params"]["_meta"] = {"progressToken": "p"}
    headers = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(raw_request(port, json.dumps(message).encode(), headers))
    sock.settimeout(5)
    data = b""
    while not data.endswith(b"\r\n0\r\n\r\n"):  # the last chunk, then the connection stays open
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before the last chunk: {data!r}"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    assert b"Transfer-Encoding: chunked" in head
    size, rest = body.split(b"\r\n", 1)
    event = rest[: int(size, 16)]
    assert event.startswith(b"event: message\ndata: ") and event.endswith(b"\n\n")
    assert b"framed" in event


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_expect_100_continue_is_answered_before_the_body_is_sent(running, step):
    client, port, _log = running(step)
    body = json.dumps(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO))
    request = raw_request(port, body.encode(), {"Expect": "100-continue"})
    head = request[: request.index(b"\r\n\r\n") + 4]
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(head)
    sock.settimeout(3)
    assert sock.recv(1024).startswith(b"HTTP/1.1 100 Continue")
    sock.sendall(body.encode())
    assert read_first_response(sock).startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_expect_100_continue_with_a_body_too_large_is_refused_without_it(running, step):
    client, port, _log = running(step)
    request = raw_request(port, b"", {"Expect": "100-continue", "Content-Length": str(5 * 1024 * 1024)})
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(request)
    assert read_all(sock, 3).startswith(b"HTTP/1.1 413")


# Every protocol revision real clients use

@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_a_2025_03_26_session_sends_a_batch_and_gets_an_array_of_answers(running, step):
    client, port, _log = running(step)
    session_id = open_session(client, "2025-03-26")
    batch = [rpc("ping", id=1), {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
             tool_call(step, "in a batch", id=2), rpc("no/such", id=3)]
    reply = client.post(batch, {"Mcp-Session-Id": session_id})
    assert reply.status == 200
    answers = reply.json()
    assert [answer["id"] for answer in answers] == [1, 2, 3]
    assert "in a batch" in answers[1]["result"]["content"][0]["text"]
    assert answers[2]["error"]["code"] == -32601


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_a_batch_of_notifications_only_gets_202(running, step):
    client, port, _log = running(step)
    session_id = open_session(client, "2025-03-26")
    batch = [{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}]
    reply = client.post(batch, {"Mcp-Session-Id": session_id})
    assert reply.status == 202 and reply.body == b""


@pytest.mark.parametrize("step", STEPS, ids=folder)
@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2024-11-05"])
def test_batches_are_refused_outside_2025_03_26(running, step, version):
    client, port, _log = running(step)
    session_id = open_session(client, version)
    reply = client.post([rpc("ping")], {"Mcp-Session-Id": session_id})
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32600
    assert "2025-03-26" in reply.json()["error"]["message"]


@pytest.mark.parametrize("step", STEPS, ids=folder)
@pytest.mark.parametrize("batch", [[], [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(101)]],
                         ids=["empty", "101 messages"])
def test_an_empty_or_oversized_batch_is_an_invalid_request(running, step, batch):
    client, port, _log = running(step)
    session_id = open_session(client, "2025-03-26")
    reply = client.post(batch, {"Mcp-Session-Id": session_id})
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32600


@pytest.mark.parametrize("step", STEPS, ids=folder)
def test_initialize_inside_a_batch_is_refused_for_that_element(running, step):
    client, port, _log = running(step)
    session_id = open_session(client, "2025-03-26")
    again = rpc("initialize", id=9, protocolVersion="2025-03-26", capabilities={}, clientInfo=CLIENT_INFO)
    answers = client.post([again, rpc("ping", id=10)], {"Mcp-Session-Id": session_id}).json()
    assert answers[0]["error"]["code"] == -32600
    assert answers[1] == {"jsonrpc": "2.0", "id": 10, "result": {}}


@pytest.mark.parametrize("step", STEPS, ids=folder)
@pytest.mark.parametrize("header", ["2025-03-26", "2024-11-05", "2025-06-18"])
def test_any_supported_handshake_version_in_the_header_is_served(running, step, header):
    client, port, _log = running(step)
    session_id = open_session(client)
    reply = client.post(rpc("tools/list"), {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": header})
    assert reply.status == 200
    assert reply.json()["result"]["tools"]


# stdio has a door of its own: one line is one message

def stdio_exchange(step, lines: list[bytes]) -> list[dict]:
    """Feed lines to a step's server over stdio; return every message it wrote back."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run([sys.executable, str(step.server), "--stdio", *vault_args(step, scratch)],
                              input=b"".join(lines), capture_output=True, timeout=60, env=quiet_environment(scratch))
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("step", STDIO_STEPS, ids=folder)
def test_stdio_answers_nan_with_a_parse_error_even_in_a_response(step):
    answers = stdio_exchange(step, [b'{"jsonrpc": "2.0", "id": NaN, "result": {}}\n'])
    assert [answer["error"]["code"] for answer in answers] == [-32700]


@pytest.mark.parametrize("step", STDIO_STEPS, ids=folder)
def test_stdio_refuses_an_overlong_line_whole_even_when_cr_bytes_follow_the_limit(step):
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    overlong = ping + b" " * (4 * 1024 * 1024 - len(ping))  # exactly the limit; with \r\r it is over
    second = b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}'
    answers = stdio_exchange(step, [overlong + b"\r\r" + second + b"\n", second + b"\n"])
    assert answers[0]["error"]["code"] == -32600 and "over" in answers[0]["error"]["message"]
    assert answers[1:] == [{"jsonrpc": "2.0", "id": 2, "result": {}}]  # only the next line is answered


@pytest.mark.parametrize("step", STDIO_STEPS, ids=folder)
def test_stdio_takes_a_batch_only_after_a_2025_03_26_handshake(step):
    def initialize(version):
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
        return json.dumps(rpc("initialize", id=0, **params)).encode() + b"\n"

    batch = json.dumps([rpc("ping", id=1), tool_call(step, "batched", id=2)]).encode() + b"\n"
    initialized = json.dumps(INITIALIZED).encode() + b"\n"
    answers = stdio_exchange(step, [batch, initialize("2025-03-26"), initialized, batch])
    assert answers[0]["error"]["code"] == -32600  # before the handshake: refused
    assert answers[1]["result"]["protocolVersion"] == "2025-03-26"
    assert [answer["id"] for answer in answers[2]] == [1, 2]
    assert "batched" in answers[2][1]["result"]["content"][0]["text"]
    refused = stdio_exchange(step, [initialize("2025-11-25"), initialized, batch])
    assert refused[1]["error"]["code"] == -32600
