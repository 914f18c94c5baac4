"""Step 10's --token over real HTTP: a request without the token, or with another,
gets 401 and a JSON-RPC error, on every method and path; the right one is served.
Without a token the server never binds beyond loopback, and the token is never
written to the log, whatever the requests carried."""
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import McpClient, rpc
from launch import quiet_environment, wait_for_url
from manifest import SAMPLE_VAULT, find_step

STEP = find_step(10)
TOKEN = "s3cret-Token_for-tests"
WRONG = "s3cret-Token_for-test5"  # one character off, at the end


@pytest.fixture
def vault(tmp_path) -> Path:
    shutil.copytree(SAMPLE_VAULT, tmp_path / "vault")
    return tmp_path / "vault"


def server_command(vault: Path, *flags: str) -> list[str]:
    return [sys.executable, str(STEP.server), "--vault", str(vault), "--port", "0", *flags]


@contextmanager
def serving(tmp_path: Path, command: list[str], env: dict | None = None):
    """The server's URL and its log file, until the block ends."""
    log_path = tmp_path / f"server-{time.monotonic_ns()}.log"
    environment = quiet_environment(str(tmp_path / "index")) | (env or {})
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=environment)
    try:
        yield wait_for_url(process, log_path, 15.0), log_path
    finally:
        process.terminate()
        process.wait(timeout=10)


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def initialize(client: McpClient, headers: dict):
    return client.post(rpc("initialize", protocolVersion="2025-11-25", capabilities={},
                           clientInfo={"name": "pytest", "version": "1"}), headers)


def assert_refused(reply) -> None:
    assert reply.status == 401, (reply.status, reply.body)
    assert reply.headers["WWW-Authenticate"].startswith("Bearer")
    body = reply.json()
    assert body["jsonrpc"] == "2.0" and "Authorization: Bearer" in body["error"]["message"], body


def test_no_token_and_a_wrong_one_get_401_and_the_right_one_is_served(tmp_path, vault):
    with serving(tmp_path, server_command(vault, "--token", TOKEN)) as (url, _):
        client = McpClient(url)
        assert_refused(initialize(client, {}))
        assert_refused(initialize(client, bearer(WRONG)))
        assert_refused(initialize(client, {"Authorization": f"Basic {TOKEN}"}))  # the token, but not as Bearer
        served = initialize(client, bearer(TOKEN))
        assert served.status == 200, served.body
        assert served.json()["result"]["serverInfo"]["name"] == "vault-mcp"
        session = {"Mcp-Session-Id": served.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post(initialized, session | bearer(TOKEN)).status == 202
        listed = client.post(rpc("tools/list", id=2), session | bearer(TOKEN))
        assert listed.status == 200 and listed.json()["result"]["tools"]
        # The session's id is no key: without the token, the session's own requests are refused too.
        assert_refused(client.post(rpc("tools/list", id=3), session))
        assert_refused(client.request("GET", headers=session | {"Accept": "text/event-stream"}))
        assert_refused(client.request("DELETE", headers=session))
        assert_refused(client.request("GET", path="/elsewhere"))


def test_the_token_may_come_from_the_environment(tmp_path, vault):
    with serving(tmp_path, server_command(vault), env={"VAULT_MCP_TOKEN": TOKEN}) as (url, _):
        client = McpClient(url)
        assert_refused(initialize(client, {}))
        assert initialize(client, bearer(TOKEN)).status == 200


def test_without_a_token_every_request_is_served_as_before(tmp_path, vault):
    with serving(tmp_path, server_command(vault)) as (url, _):
        assert initialize(McpClient(url), {}).status == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "my-laptop.local"])
def test_binding_beyond_loopback_without_a_token_refuses_to_start(tmp_path, vault, host):
    done = subprocess.run(server_command(vault, "--host", host), capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL, env=quiet_environment(str(tmp_path / "index")))
    assert done.returncode == 1
    assert "--token" in done.stderr and "listening" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("token", ["", "two words", "caf\u00e9"])
def test_an_empty_or_unusable_token_is_refused_at_the_start(tmp_path, vault, token):
    done = subprocess.run(server_command(vault, "--host", "0.0.0.0", "--token", token), capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL,
                          env=quiet_environment(str(tmp_path / "index")))
    assert done.returncode == 1 and "--token" in done.stderr, done.stderr


def test_beyond_loopback_with_a_token_any_name_of_the_machine_is_served(tmp_path, vault):
    """Another device names the machine by its address: with a token, the Host check gives way to it."""
    with serving(tmp_path, server_command(vault, "--host", "0.0.0.0", "--token", TOKEN)) as (url, _):
        client = McpClient(url.replace("0.0.0.0", "127.0.0.1"))
        assert_refused(initialize(client, {"Host": "192.168.1.20:3000"}))
        assert initialize(client, bearer(TOKEN) | {"Host": "192.168.1.20:3000"}).status == 200


def test_the_token_is_never_logged(tmp_path, vault):
    command = server_command(vault, "--token", TOKEN, "--log-level", "debug")
    with serving(tmp_path, command) as (url, log_path):
        client = McpClient(url)
        initialize(client, bearer(WRONG))
        initialize(client, {})
        initialize(client, bearer(TOKEN))
    log = log_path.read_text()
    assert "401" in log and "token" in log  # the refusals and the start were logged...
    assert TOKEN not in log and WRONG not in log  # ...but never a token
