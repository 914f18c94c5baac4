"""The server log, from step 2 on: one line per request, with the method, the tool or
resource, the outcome and the time; never a note's text nor an argument but a path;
a line for every note written; and --log-level (VAULT_MCP_LOG_LEVEL in step 10)
that silences the request lines. Real servers, over HTTP (step 2) and stdio."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest

from helpers import McpClient, StdioServer, rpc
from launch import quiet_environment, running_server
from manifest import SAMPLE_VAULT, find_step

SECRET = "SECRET-words-of-a-note"
TIME = r"\d+\.\d ms"


def requests(step: int) -> list[tuple[dict, str]]:
    """Requests that end ok, isError and in a JSON-RPC error, each with the line it should log.
    Before step 4 the tool is echo; from step 4 it is get_note, whose path may be logged."""
    if step < 4:
        return [
            (rpc("tools/call", id=11, name="echo", arguments={"text": SECRET}), rf"tools/call tool=echo ok {TIME}$"),
            (rpc("tools/call", id=12, name="echo", arguments={"text": 42}), rf"tools/call tool=echo isError {TIME}$"),
            (rpc("no/such", id=13), rf"no/such error -32601 {TIME}$"),
        ]
    extra = {"heading": SECRET} if step >= 5 else {}  # an argument that is not a path
    return [
        (rpc("tools/call", id=11, name="get_note", arguments={"path": "Home.md"}),
         rf'tools/call tool=get_note path="Home.md" ok {TIME}$'),
        (rpc("tools/call", id=12, name="get_note", arguments={"path": "No such note.md", **extra}),
         rf'tools/call tool=get_note path="No such note.md" isError {TIME}$'),
        (rpc("no/such", id=13), rf"no/such error -32601 {TIME}$"),
        (rpc("resources/read", id=14, uri="vault:///Home.md"), rf'resources/read uri="vault:///Home.md" ok {TIME}$'),
    ]


def note_text_in(log: str) -> bool:
    """Whether any line of Home.md's text, which get_note and resources/read return, is in log."""
    lines = [line for line in (SAMPLE_VAULT / "Home.md").read_text().splitlines() if len(line) > 20]
    return any(line in log for line in lines)


def request_lines(log: str) -> list[str]:
    return [line.split(" request ", 1)[1] for line in log.splitlines() if " request " in line]


@pytest.fixture
def vault(tmp_path):
    shutil.copytree(SAMPLE_VAULT, tmp_path / "vault")
    return tmp_path / "vault"


def stdio_session(step: int, vault, messages: list[dict], *flags: str, env: dict | None = None):
    """Run step's server over stdio, send each message and wait for its answer; return
    the answers, whatever else came on stdout, and everything on stderr."""
    server_py = find_step(step).server
    args = [*flags, *(["--vault", str(vault)] if step >= 4 else [])]
    server = StdioServer(server_py, *args, env={**quiet_environment(str(vault.parent / "index")), **(env or {})})
    try:
        server.handshake()
        answers = []
        for message in messages:
            server.send(message)
            answers.append(server.answer(message["id"]))
        server.process.stdin.close()  # stdin closed: the server ends on its own
        server.process.wait(timeout=10)
        rest = []
        while not server.lines.empty():
            rest.append(server.lines.get())
        return answers, rest, server.process.stderr.read().decode()
    finally:
        server.stop()


def test_step2_logs_a_line_per_request_over_http():
    with running_server(find_step(2).server) as (url, log_path):
        client = McpClient(url)
        session_id = client.open_session()
        for message, _ in requests(2):
            client.send(session_id, message)
        refused = client.send("no-such-session", rpc("tools/list", id=14))
        log = log_path.read_text()
    assert refused.status == 404
    lines = request_lines(log)
    for (_, pattern), line in zip(requests(2), lines[1:], strict=True):  # after the initialize line
        assert re.fullmatch(pattern, line), (pattern, line)
    assert SECRET not in log
    # The door's access line is kept for a refusal only: the core's line says the rest.
    assert '"POST /mcp HTTP/1.1" 404' in log and '"POST /mcp HTTP/1.1" 200' not in log


@pytest.mark.parametrize("step", [3, 7])  # protocol.py's handle as step 3 and step 7 have it
def test_a_line_per_request_over_stdio_and_none_on_stdout(step, vault):
    answers, rest, log = stdio_session(step, vault, [message for message, _ in requests(step)])
    assert [answer["id"] for answer in answers] == [message["id"] for message, _ in requests(step)]
    lines = request_lines(log)
    assert lines[0].startswith("initialize ok ")
    for (_, pattern), line in zip(requests(step), lines[1:], strict=True):
        assert re.fullmatch(pattern, line), (pattern, line)
    assert SECRET not in log and not note_text_in(log)
    for line in rest:  # stdout carries the protocol only
        json.loads(line)


def test_a_written_note_is_logged_by_its_path_never_its_text(vault):
    create = {"title": "Shopping list", "content": SECRET, "tags": ["secret-tag"]}
    messages = [rpc("tools/call", id=21, name="create_note", arguments=create),
                rpc("tools/call", id=22, name="create_note", arguments=create)]
    answers, _, log = stdio_session(8, vault, messages)
    assert [answer["result"]["isError"] for answer in answers] == [False, True]
    assert log.count(' inbox created the note "Inbox/Shopping list.md"') == 1  # the refused one wrote nothing
    assert re.fullmatch(rf"tools/call tool=create_note ok {TIME}", request_lines(log)[1])
    assert re.fullmatch(rf"tools/call tool=create_note isError {TIME}", request_lines(log)[2])
    assert SECRET not in log and "secret-tag" not in log


@pytest.mark.parametrize("step", range(3, 11))  # each step's server.py reads the flag its own way
def test_log_level_warning_silences_the_request_lines(step, vault):
    answers, _, log = stdio_session(step, vault, [requests(step)[0][0]], "--log-level", "warning")
    assert answers[0]["result"]["isError"] is False
    assert log == "", log  # no request line, nor any other line below warning


def test_log_level_warning_in_step2(tmp_path):
    with socket.socket() as probe:  # a free port: at warning, the server does not say which it took
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_path = tmp_path / "log"
    with open(log_path, "w") as log:
        process = subprocess.Popen([sys.executable, str(find_step(2).server), "--port", str(port),
                                    "--log-level", "warning"], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        client = McpClient(f"http://127.0.0.1:{port}/mcp")
        for _ in range(100):
            try:
                session_id = client.open_session()
                break
            except ConnectionError:
                time.sleep(0.05)
        else:
            raise AssertionError("step 2 did not answer on port %d" % port)
        client.send(session_id, requests(2)[0][0])
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert log_path.read_text() == ""


def test_the_variable_sets_the_level_and_the_flag_wins_over_it(vault):
    quiet = {"VAULT_MCP_LOG_LEVEL": "warning"}
    _, _, silent = stdio_session(10, vault, [requests(10)[0][0]], env=quiet)
    assert silent == "", silent
    _, _, spoken = stdio_session(10, vault, [requests(10)[0][0]], "--log-level", "info", env=quiet)
    assert re.fullmatch(requests(10)[0][1], request_lines(spoken)[1])


def test_a_listen_is_logged_when_acknowledged_or_refused(vault):
    """subscriptions/listen (step 9 on) goes around Server.handle: its answer comes only
    when it ends, so the line comes with the acknowledgement, or the refusal."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    listen = rpc("subscriptions/listen", id=31, _meta=meta, notifications={"resourcesListChanged": True})
    refused = rpc("subscriptions/listen", id=32, _meta=meta)
    server = StdioServer(find_step(9).server, "--vault", str(vault), env=quiet_environment(str(vault.parent / "i")))
    try:
        server.send(listen)
        assert server.read()["method"] == "notifications/subscriptions/acknowledged"
        assert server.ask(refused)["error"]["code"] == -32602
        server.process.stdin.close()
        server.process.wait(timeout=10)
        log = server.process.stderr.read().decode()
    finally:
        server.stop()
    lines = request_lines(log)
    assert re.fullmatch(rf"subscriptions/listen ok {TIME}", lines[0]), lines
    assert re.fullmatch(rf"subscriptions/listen error -32602 {TIME}", lines[1]), lines


def test_a_wrong_level_is_refused_in_one_line():
    """From the flag (argparse's choices) and from the variable (step 10's OptionMaker)."""
    flag = subprocess.run([sys.executable, str(find_step(2).server), "--log-level", "loud"],
                          capture_output=True, text=True, timeout=30)
    assert flag.returncode == 2 and "invalid choice: 'loud'" in flag.stderr, flag.stderr
    variable = subprocess.run([sys.executable, str(find_step(10).server), "--stdio"], capture_output=True,
                              text=True, timeout=30, env={**os.environ, "VAULT_MCP_LOG_LEVEL": "loud"})
    assert variable.returncode != 0 and variable.stderr.count("\n") == 1, variable.stderr
    assert "VAULT_MCP_LOG_LEVEL='loud' is not one of debug, info, warning" in variable.stderr
