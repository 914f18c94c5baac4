"""Bad input is answered as bad input, and no message ends the server.

An unpaired surrogate (JSON's "\\ud800") in a path or a note URI is refused like
any other impossible name, from step 4 on: isError for a tool, -32602 for a
protocol method, never -32603 and never a traceback. From step 9, a 2026-07-28
subscriptions/listen over stdio has its envelope checked before a subscription
opens, like every other method, and a hostile one leaves the process running.
Every server here runs on its own copy of the sample vault."""
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from helpers import CLIENT_INFO, McpClient, rpc
from launch import quiet_environment, running_server
from manifest import SAMPLE_VAULT, load_steps

SURROGATE_PATH = "\ud800.md"
SURROGATE_URI = "vault:///\ud800.md"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
STEPS = {step.number: step for step in load_steps()}
PATH_TOOLS = {4: ["get_note"], 8: ["get_note", "get_backlinks", "related_notes"]}  # each step's tools taking a path


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    vault = tmp_path_factory.mktemp("hostile") / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    return vault


def stdio_exchange(number: int, vault, messages: list) -> tuple[list[dict], str]:
    """Send every message as one line, close stdin, and return (the lines the
    server wrote, its log). The server must then have exited on its own, with 0."""
    lines = b"".join(json.dumps(message).encode() + b"\n" for message in messages)
    with tempfile.TemporaryDirectory() as index_dir:
        done = subprocess.run([sys.executable, str(STEPS[number].server), "--stdio", "--vault", str(vault)],
                              input=lines, capture_output=True, timeout=60, env=quiet_environment(index_dir))
    log = done.stderr.decode(errors="replace")
    assert done.returncode == 0, log
    return [json.loads(line) for line in done.stdout.splitlines()], log


def stateless(method: str, id, **params) -> dict:
    return rpc(method, id=id, _meta=META, **params)


def handshake(id: int = 0) -> list[dict]:
    return [rpc("initialize", id=id, protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO),
            {"jsonrpc": "2.0", "method": "notifications/initialized"}]


def by_id(answers: list[dict]) -> dict:
    return {answer["id"]: answer for answer in answers if "id" in answer}


def path_tools(number: int) -> list[str]:
    return PATH_TOOLS[max(first for first in PATH_TOOLS if first <= number)]


@pytest.mark.parametrize("number", [4, 5, 6, 7, 8, 9, 10])
def test_a_surrogate_in_a_path_or_uri_is_bad_input_over_stdio(number, vault):
    tools = path_tools(number)
    messages = [stateless("tools/call", name, name=name, arguments={"path": SURROGATE_PATH}) for name in tools]
    messages += [stateless("tools/call", "folder", name="list_notes", arguments={"folder": "\ud800"}),
                 stateless("resources/read", "read", uri=SURROGATE_URI)]
    answers, log = stdio_exchange(number, vault, messages)
    answers = by_id(answers)
    for id in [*tools, "folder"]:
        result = answers[id]["result"]
        assert result["isError"] is True, result
        assert "surrogate" in result["content"][0]["text"], result
        assert "\ud800" not in result["content"][0]["text"]  # spelled as the six characters \ud800
    assert answers["read"]["error"]["code"] == -32602
    assert "Traceback" not in log


@pytest.mark.parametrize("number", [5, 6, 7, 8, 9, 10])
def test_a_surrogate_heading_is_named_back_escaped(number, vault):
    answers, log = stdio_exchange(number, vault, [
        stateless("tools/call", "heading", name="get_note", arguments={"path": "Home", "heading": "\ud800"})])
    result = by_id(answers)["heading"]["result"]
    assert result["isError"] is True and "has no heading" in result["content"][0]["text"], result
    assert "\ud800" not in result["content"][0]["text"]  # spelled as the six characters \ud800
    assert "Traceback" not in log


@pytest.mark.parametrize("number", [9, 10])
def test_a_surrogate_uri_to_subscribe_unsubscribe_and_listen_is_bad_input(number, vault):
    listen = stateless("subscriptions/listen", "listen", notifications={
        "resourceSubscriptions": [SURROGATE_URI, "vault:///Home.md"]})
    answers, log = stdio_exchange(number, vault, [
        *handshake(), rpc("resources/subscribe", id="sub", uri=SURROGATE_URI),
        rpc("resources/unsubscribe", id="unsub", uri=SURROGATE_URI), listen, rpc("ping", id="after")])
    ack = next(answer for answer in answers if answer.get("method") == "notifications/subscriptions/acknowledged"
               and answer["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen")
    # A URI this server cannot serve is left out of the acknowledgement, as a missing note is.
    assert ack["params"]["notifications"] == {"resourceSubscriptions": ["vault:///Home.md"]}
    answers = by_id(answers)
    assert answers["sub"]["error"]["code"] == answers["unsub"]["error"]["code"] == -32602
    assert answers["after"]["result"] == {}
    assert "Traceback" not in log


@pytest.mark.parametrize("number", [9, 10])
def test_a_surrogate_uri_to_listen_over_http_is_acknowledged_without_it(number, vault):
    with running_server(STEPS[number].server, "--vault", str(vault)) as (url, log_path):
        body = stateless("subscriptions/listen", "listen", notifications={"resourceSubscriptions": [SURROGATE_URI]})
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
        status, first_event = first_sse_event(url, body, headers)
        assert status == 200
        assert first_event["method"] == "notifications/subscriptions/acknowledged"
        assert first_event["params"]["notifications"] == {}
        client = McpClient(url)
        session_id = client.open_session()
        answer = client.send(session_id, rpc("resources/read", uri=SURROGATE_URI)).json()
        assert answer["error"]["code"] == -32602
        assert "Traceback" not in log_path.read_text()


@pytest.mark.parametrize("number", [4, 7, 10])  # where listing, the search index and reconcile begin
def test_a_file_name_that_is_not_utf8_is_not_listed_and_breaks_nothing(number, tmp_path):
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    try:
        with open(os.path.join(bytes(vault / "Inbox"), b"\x80 odd bytes.md"), "wb") as note:
            note.write(b"Bread, from a file whose name is not UTF-8.\n")
    except OSError:
        pytest.skip("this file system takes only UTF-8 names")
    messages = [stateless("tools/call", "list", name="list_notes", arguments={"folder": "Inbox"}),
                stateless("resources/list", "resources")]
    if number >= 7:
        messages.append(stateless("tools/call", "search", name="search_vault", arguments={"query": "bread"}))
    answers, log = stdio_exchange(number, vault, messages)
    answers = by_id(answers)
    assert "error" not in answers["resources"]
    if number >= 7:
        assert answers["search"]["result"]["isError"] is False, answers["search"]
    assert answers["list"]["result"]["structuredContent"]["notes"] == [
        "Inbox/Rice koji quick capture.md", "Inbox/Try tangzhong.md"]
    assert "\\udc80" not in json.dumps(answers["resources"])
    assert "Traceback" not in log


def first_sse_event(url: str, body: dict, headers: dict) -> tuple[int, dict]:
    """POST body, and return the status and the first event of the SSE answer;
    the connection is closed then, which ends a subscription."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("POST", parts.path, json.dumps(body), headers)
        response = connection.getresponse()
        for _ in range(20):  # an event is a few lines: event:, data:, a blank line
            line = response.fp.readline()
            if line.startswith(b"data: "):
                return response.status, json.loads(line[6:])
        return response.status, {}
    finally:
        connection.close()


HOSTILE_LISTENS = {
    "array-id": {"id": [1]},
    "object-id": {"id": {"a": 1}},
    "null-id": {"id": None},
    "float-id": {"id": 1.5},
    "bool-id": {"id": True},
    "jsonrpc-1.0": {"jsonrpc": "1.0"},
    "no-jsonrpc": {"jsonrpc": None},
}


@pytest.mark.parametrize("number", [9, 10])
def test_a_listen_with_a_broken_envelope_is_refused_over_stdio_and_the_server_goes_on(number, vault):
    messages = []
    for name, change in HOSTILE_LISTENS.items():
        message = {**stateless("subscriptions/listen", name, notifications={}), **change}
        messages.append({key: value for key, value in message.items() if value is not None or key == "id"})
    messages.append(rpc("ping", id="after"))
    answers, log = stdio_exchange(number, vault, [*handshake(), *messages])
    assert not [answer for answer in answers if answer.get("method") == "notifications/subscriptions/acknowledged"]
    refusals = [answer for answer in answers if "method" not in answer and answer.get("id") not in (0, "after")]
    assert [refusal["error"]["code"] for refusal in refusals] == [-32600] * len(HOSTILE_LISTENS)
    assert by_id(answers)["after"]["result"] == {}
    assert "Traceback" not in log


@pytest.mark.parametrize("number", [9, 10])
def test_a_second_listen_with_a_listening_id_is_refused_over_stdio(number, vault):
    listen = stateless("subscriptions/listen", "twice", notifications={"resourcesListChanged": True})
    answers, _ = stdio_exchange(number, vault, [listen, listen])
    acks = [answer for answer in answers if answer.get("method") == "notifications/subscriptions/acknowledged"]
    assert len(acks) == 1
    assert by_id(answers)["twice"]["error"]["code"] == -32600


def test_a_short_fuzz_run_of_step_10_finds_nothing():
    """fuzz_server.py with a few hundred messages over stdio and HTTP, both eras."""
    fuzzer = Path(__file__).parent / "fuzz_server.py"
    done = subprocess.run([sys.executable, str(fuzzer), "--step", "10", "--count", "300", "--seed", "15"],
                          capture_output=True, text=True, timeout=300)
    summary = done.stdout.strip().splitlines()[-1]
    counts = dict(part.rsplit(" ", 1) for part in summary.rsplit(": ", 1)[1].split(", "))
    assert counts.keys() >= {"exits", "tracebacks", "internal errors", "unexpected tool failures", "http 5xx", "hangs"}
    assert set(counts.values()) == {"0"}, done.stderr[-3000:]
    assert done.returncode == 0


@pytest.mark.parametrize("number", [9, 10])
def test_cancelling_with_true_leaves_subscription_1_listening_over_stdio(number, vault):
    # Python counts True as 1: a cancel naming true must not end the subscription with id 1.
    listen = stateless("subscriptions/listen", 1, notifications={"resourcesListChanged": True})
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": True}}
    answers, _ = stdio_exchange(number, vault, [listen, cancel, listen])
    acks = [answer for answer in answers if answer.get("method") == "notifications/subscriptions/acknowledged"]
    assert len(acks) == 1
    assert by_id(answers)[1]["error"]["code"] == -32600  # still listening
