"""The reader's path: chapters 7 to 10 followed in order, each step started with make and
no VAULT, so that each serves the practice vault it gets by default, with its index in the
reader's cache. The reader has run `make run` first, and chapter 8's scripts create a note
before chapter 9 begins; still every transcript of steps 7 to 10 comes back as recorded.
(Steps 4 to 6 write nothing, so starting there would add time and no test.)

The run happens in a temporary folder laid out like a fresh clone, so nothing is written
into the repository or the user's cache. Every wait is bounded."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import McpClient, rpc
from launch import quiet_environment, wait_for_url
from manifest import ROOT, SAMPLE_VAULT, find_step
from replay import normalise, run_with_python

PATH_STEPS = [7, 8, 9, 10]
TIMEOUT = 30.0  # only ever reached when a test fails


def clone(tmp_path: Path) -> Path:
    """A folder laid out like a fresh clone, with the Makefile, the tools in steps/, the shared
    data and steps 7 to 10."""
    repo = tmp_path / "repo"
    (repo / "steps").mkdir(parents=True)
    shutil.copy2(ROOT / "Makefile", repo)
    for tool in ["steps.toml", *(path.name for path in (ROOT / "steps").glob("*.py"))]:
        shutil.copy2(ROOT / "steps" / tool, repo / "steps")
    shutil.copytree(SAMPLE_VAULT, repo / "steps" / "sample-vault")
    shutil.copytree(ROOT / "steps" / "data", repo / "steps" / "data",  # the offline embedder's table
                    ignore=shutil.ignore_patterns("__pycache__"))
    for number in PATH_STEPS:
        folder = find_step(number).folder
        shutil.copytree(ROOT / "steps" / folder, repo / "steps" / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return repo


def readers_environment(tmp_path: Path) -> dict:
    """A reader's: no embedder named and no Ollama answering, so the server picks its
    offline default, as the transcripts must show; the index where a reader's would be,
    in the cache (here tmp_path/cache), named by the vault's path."""
    quiet = quiet_environment("")
    env = {key: value for key, value in quiet.items()
           if key not in ("VAULT_MCP_EMBEDDER", "VAULT_MCP_INDEX_DIR", "VAULT_MCP_VAULT", "VAULT")}
    return env | {"XDG_CACHE_HOME": str(tmp_path / "cache"), "MAKEFLAGS": "",
                  "OLLAMA_HOST": "http://127.0.0.1:9"}  # the discard port: nothing listens there


@contextmanager
def make_step(repo: Path, target: str, env: dict, log_path: Path):
    """`make TARGET` as the reader types it (on a free port); yield the URL once it listens."""
    with open(log_path, "w") as log:
        make = subprocess.Popen(["make", "--no-print-directory", target, "PORT=0", f"PYTHON={sys.executable}"],
                                cwd=repo, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
    try:
        yield wait_for_url(make, log_path, TIMEOUT)
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=10)


def wait_for_a_stored_index(cache: Path) -> None:
    """Until an index's manifest names a whole generation: the last thing a build stores."""
    deadline = time.monotonic() + TIMEOUT
    while not [manifest for pattern in ("vault-mcp/index-*/index.json", "vault-mcp/index-*/*/index.json")
               for manifest in cache.glob(pattern)  # steps 7-9; step 10 keeps one folder per embedder
               if json.loads(manifest.read_text()).get("complete", True)]:
        assert time.monotonic() < deadline, f"no index was stored in {cache}"
        time.sleep(0.1)


def replay(step, url: str, vault: Path) -> dict[str, str]:
    """Every wire script of the step, in order, in one session as the chapter runs them."""
    state, session_ids = {"MCP_VAULT": str(vault)}, set()
    return {script.with_suffix(".out").name: normalise(run_with_python(script, url, state), vault, session_ids)
            for script in step.wire_scripts()}


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_chapters_7_to_10_in_order_after_make_run_answer_as_their_transcripts(tmp_path):
    repo, env = clone(tmp_path), readers_environment(tmp_path)
    with make_step(repo, "run", env, tmp_path / "run.log"):
        wait_for_a_stored_index(tmp_path / "cache")
    differing = []
    for number in PATH_STEPS:
        step = find_step(number)
        log_path = tmp_path / f"step-{number}.log"
        vault = (repo / "steps" / "scratch" / "vaults" / step.folder).resolve()
        with make_step(repo, f"step-{number}", env, log_path) as url:
            answers = replay(step, url, vault)
        if number == 7 and "yet; building it" not in log_path.read_text():
            differing.append("step 7 startup: an index loaded, where chapter 7 shows one being built")
        differing += [f"step {number} {name}" for name, text in answers.items()
                      if text != (step.path / "wire" / name).read_text()]
    assert not differing, "differ from the recorded transcripts:\n" + "\n".join(differing)
    assert not (repo / "steps" / "scratch" / "sample-vault").exists()


def reset_vault(repo: Path, env: dict) -> str:
    """What `make reset-vault` prints."""
    done = subprocess.run(["make", "--no-print-directory", "reset-vault", f"PYTHON={sys.executable}"], cwd=repo,
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_reset_vault_throws_away_what_the_scripts_wrote_and_the_index(tmp_path):
    repo, env = clone(tmp_path), readers_environment(tmp_path)
    assert reset_vault(repo, env) == "there were no practice vaults in steps/scratch/vaults\n"
    vault = repo / "steps" / "scratch" / "vaults" / find_step(8).folder
    reader_copy = repo / "steps" / "scratch" / find_step(8).folder / "mine.txt"  # make try-8's copy
    reader_copy.parent.mkdir(parents=True)
    reader_copy.write_text("the reader's exercise\n")
    with make_step(repo, "step-8", env, tmp_path / "first.log") as url:
        server = McpClient(url)
        session = server.open_session()
        reply = server.send(session, rpc("tools/call", name="create_note", arguments={"title": "Mine", "content": "x"}))
        assert reply.json()["result"]["isError"] is False
        wait_for_a_stored_index(tmp_path / "cache")
    assert (vault / "Inbox" / "Mine.md").is_file()

    assert reset_vault(repo, env).startswith(f"removed the practice vaults of {find_step(8).folder} and their")
    assert not vault.exists() and list((tmp_path / "cache" / "vault-mcp").iterdir()) == []
    assert reader_copy.read_text() == "the reader's exercise\n" and (repo / "steps" / "sample-vault").is_dir()

    with make_step(repo, "step-8", env, tmp_path / "again.log"):
        wait_for_a_stored_index(tmp_path / "cache")
    assert "yet; building it" in (tmp_path / "again.log").read_text()
    assert not (vault / "Inbox" / "Mine.md").exists() and (vault / "Home.md").is_file()

