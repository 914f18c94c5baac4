"""Start a step's server on a free port and stop it again (for checks and tests)."""
import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

LISTENING = re.compile(r"listening on (http://\S+)")


# What a reader without Ollama gets, so the transcripts show what they will see.
READERS_EMBEDDER = "static"


def quiet_environment(index_dir: str, embedder: str = "hash") -> dict:
    """The environment for a server run by a check or a test: an offline embedder,
    so that answers are the same on every machine (with or without Ollama), and a
    search index in index_dir, never in the user's cache. Steps before 7 ignore both.
    Tests use the hashing embedder, which needs no data file; the checks record what a
    reader sees (READERS_EMBEDDER). From step 9 the watcher polls every tenth of a
    second and waits a fifth for a note to be quiet, so a change a test makes shows
    within moments."""
    return {**os.environ, "VAULT_MCP_EMBEDDER": embedder, "VAULT_MCP_INDEX_DIR": index_dir,
            "VAULT_MCP_WATCH_INTERVAL": "0.1", "VAULT_MCP_DEBOUNCE": "0.2"}


@contextmanager
def running_server(server: Path, *args: str, timeout: float = 10.0, embedder: str = "hash"):
    """Run `server.py --port 0 ARGS...`; yield (url, log_path) once it listens.

    Port 0 lets the operating system pick a free port, so parallel runs never
    collide; the server prints the URL it got on stderr.
    """
    with tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False) as log:
        log_path = Path(log.name)
    index_dir = tempfile.TemporaryDirectory()
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [sys.executable, str(server), "--port", "0", *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=quiet_environment(index_dir.name, embedder),
        )
    try:
        yield wait_for_url(process, log_path, timeout), log_path
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log_path.unlink(missing_ok=True)
        index_dir.cleanup()


def wait_for_url(process: subprocess.Popen, log_path: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = LISTENING.search(log_path.read_text())
        if match:
            return match.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(f"the server did not start; its log says:\n{log_path.read_text()}")
