"""Step 10 started by a person rather than a client: --stdio typed in a terminal says,
in one line on stderr, that it waits for a client; started by a client (stdin a pipe)
it says nothing of the kind. And away from the repository, without --vault, the
message names --vault."""
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time

import pytest

from helpers import rpc
from launch import quiet_environment
from manifest import SAMPLE_VAULT, find_step

STEP = find_step(10)
WAITING = "Waiting for an MCP client on stdin"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a terminal made with pty")


@pytest.fixture
def vault(tmp_path):
    shutil.copytree(SAMPLE_VAULT, tmp_path / "vault")
    return tmp_path / "vault"


def stderr_until(process: subprocess.Popen, text: str, seconds: float = 15.0) -> str:
    """What the process wrote on stderr until a line holding text, or until it stopped or time ran out."""
    said, deadline = b"", time.monotonic() + seconds
    while text.encode() not in said and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.1)
        if ready:
            chunk = os.read(process.stderr.fileno(), 4096)
            if not chunk:
                break
            said += chunk
    return said.decode()


def test_stdio_in_a_terminal_says_in_one_line_that_it_waits_for_a_client(tmp_path, vault):
    terminal, its_other_end = pty.openpty()
    command = [sys.executable, str(STEP.server), "--vault", str(vault), "--stdio", "--log-level", "warning"]
    process = subprocess.Popen(command, stdin=its_other_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=quiet_environment(str(tmp_path / "index")))
    os.close(its_other_end)
    try:
        said = stderr_until(process, WAITING)
    finally:
        process.kill()
        process.wait(timeout=10)
        os.close(terminal)
        process.stdout.close()
        process.stderr.close()
    lines = [line for line in said.splitlines() if WAITING in line]
    assert len(lines) == 1 and "--stdio" in lines[0], said


def test_stdio_started_by_a_client_says_nothing_of_waiting(tmp_path, vault):
    command = [sys.executable, str(STEP.server), "--vault", str(vault), "--stdio"]
    initialize = rpc("initialize", protocolVersion="2025-11-25", capabilities={},
                     clientInfo={"name": "pytest", "version": "1"})
    done = subprocess.run(command, input=json.dumps(initialize) + "\n", capture_output=True, text=True,
                          timeout=30, env=quiet_environment(str(tmp_path / "index")))
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "vault-mcp"
    assert WAITING not in done.stderr


def test_a_copy_away_from_the_repository_without_a_vault_says_to_give_one(tmp_path):
    """server.py alone in a folder, as the .pyz and the vault-mcp command hold it."""
    alone = tmp_path / "server"
    shutil.copytree(STEP.path, alone, ignore=shutil.ignore_patterns("wire", "__pycache__"))
    done = subprocess.run([sys.executable, str(alone / "server.py"), "--stdio"], capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL, env=quiet_environment(str(tmp_path / "index")))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--vault" in lines[0] and "steps.toml" not in lines[0], lines
