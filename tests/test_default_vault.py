"""Started without --vault, every step that reads a vault serves its own practice vault,
steps/scratch/vaults/NN-name, a copy of the sample vault made when missing, and never the
repository's own steps/sample-vault: by hand, over stdio, through client.py, through make,
and from a reader's scratch copy of the step.

Each test runs in a temporary folder laid out like a clone (steps/steps.toml, the sample
vault, the step), so nothing is written into the real repository. Every wait is bounded."""
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import McpClient, StdioServer, rpc
from launch import READERS_EMBEDDER, quiet_environment, wait_for_url
from manifest import ROOT, SAMPLE_VAULT, load_steps

VAULT_STEPS = [step for step in load_steps() if step.vault]
WRITING_STEPS = {8, 9, 10}  # create_note is born in step 8
TIMEOUT = 15.0  # only ever reached when a test fails


def clone(tmp_path: Path, step) -> Path:
    """A folder laid out like the repository, with this one step; its steps/ folder."""
    steps = tmp_path / "repo" / "steps"
    steps.mkdir(parents=True)
    shutil.copy2(ROOT / "steps" / "steps.toml", steps)
    shutil.copytree(SAMPLE_VAULT, steps / "sample-vault")
    shutil.copytree(ROOT / "steps" / "data", steps / "data")  # the offline embedder's table
    shutil.copytree(step.path, steps / step.folder, ignore=shutil.ignore_patterns("__pycache__"))
    return steps


def practice_vault(steps: Path, step) -> Path:
    return steps / "scratch" / "vaults" / step.folder


def files_of(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def environment(tmp_path: Path, embedder: str = "hash") -> dict:
    """An offline embedder and an index in tmp_path; no vault from the environment (step 10)."""
    quiet = quiet_environment(str(tmp_path / "index"), embedder)
    return {key: value for key, value in quiet.items() if key != "VAULT_MCP_VAULT"}


@pytest.mark.parametrize("step", VAULT_STEPS, ids=lambda step: f"step{step.number}")
def test_a_server_without_vault_serves_a_scratch_copy_made_when_missing(tmp_path, step):
    steps = clone(tmp_path, step)
    tracked = files_of(steps / "sample-vault")
    server = StdioServer(steps / step.folder / "server.py", env=environment(tmp_path))
    try:
        server.handshake()
        name = "create_note" if step.number in WRITING_STEPS else "list_notes"
        arguments = {"title": "Written", "content": "x"} if name == "create_note" else {"folder": "Inbox"}
        server.send(rpc("tools/call", id=2, name=name, arguments=arguments))
        result = server.answer(2, TIMEOUT)["result"]
    finally:
        server.stop()
    assert result["isError"] is False, result
    assert files_of(steps / "sample-vault") == tracked, "the tracked sample vault was written into"
    copy = files_of(practice_vault(steps, step))
    if step.number in WRITING_STEPS:
        assert copy.pop("Inbox/Written.md").endswith(b"x")
        copy = {path: data for path, data in copy.items() if not path.endswith(".lock")}
    assert copy == tracked
    assert os.listdir(steps / "scratch" / "vaults") == [step.folder]  # no half-made copy left beside it


def test_an_existing_copy_is_served_as_it_is(tmp_path):
    step = next(step for step in VAULT_STEPS if step.number == 4)
    steps = clone(tmp_path, step)
    practice_vault(steps, step).mkdir(parents=True)
    (practice_vault(steps, step) / "Mine.md").write_text("the reader's own note\n")
    server = StdioServer(steps / step.folder / "server.py", env=environment(tmp_path))
    try:
        server.handshake()
        listed = server.ask(rpc("tools/call", id=2, name="list_notes", arguments={}))["result"]
    finally:
        server.stop()
    assert listed["structuredContent"]["notes"] == ["Mine.md"]


@pytest.mark.parametrize("step", [s for s in VAULT_STEPS if s.number in (4, 5, 7, 8)],
                         ids=lambda step: f"step{step.number}")
def test_client_py_without_arguments_talks_to_a_server_on_the_scratch_copy(tmp_path, step):
    steps = clone(tmp_path, step)
    tracked = files_of(steps / "sample-vault")
    done = subprocess.run([sys.executable, str(steps / step.folder / "client.py")], capture_output=True,
                          text=True, timeout=60, env=environment(tmp_path, READERS_EMBEDDER))  # as client.out was recorded
    assert done.returncode == 0, done.stderr
    assert done.stdout == (step.path / "client.out").read_text()
    assert f"vault: {practice_vault(steps, step).resolve()}" in done.stderr
    assert files_of(practice_vault(steps, step)) == tracked == files_of(steps / "sample-vault")


def test_a_readers_scratch_copy_of_a_step_serves_the_steps_practice_vault(tmp_path):
    step = next(step for step in VAULT_STEPS if step.number == 8)
    steps = clone(tmp_path, step)
    shutil.move(steps / step.folder, steps / "scratch" / step.folder)  # where make try-8 puts it,
    shutil.copytree(steps / "data", steps / "scratch" / "data")  # with the shared data beside it
    tracked = files_of(steps / "sample-vault")
    server = StdioServer(steps / "scratch" / step.folder / "server.py", env=environment(tmp_path))
    try:
        server.handshake()
        server.send(rpc("tools/call", id=2, name="create_note", arguments={"title": "Tried", "content": "x"}))
        assert server.answer(2, TIMEOUT)["result"]["isError"] is False
    finally:
        server.stop()
    assert (practice_vault(steps, step) / "Inbox" / "Tried.md").is_file()
    assert files_of(steps / "sample-vault") == tracked


def test_a_step_outside_the_repository_asks_for_a_vault_in_one_line(tmp_path):
    step = next(step for step in VAULT_STEPS if step.number == 4)
    alone = shutil.copytree(step.path, tmp_path / "alone", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, str(alone / "server.py"), "--stdio"], capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL, env=environment(tmp_path))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Give a folder with --vault" in done.stderr, done.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("number", [4, 8, 10])
def test_make_step_n_serves_the_scratch_copy_and_create_note_writes_there(tmp_path, number):
    step = next(step for step in VAULT_STEPS if step.number == number)
    steps = clone(tmp_path, step)
    shutil.copy2(ROOT / "Makefile", steps.parent)
    tracked = files_of(steps / "sample-vault")
    log_path = tmp_path / "make.log"
    env = environment(tmp_path) | {"MAKEFLAGS": ""}
    env.pop("VAULT", None)
    with open(log_path, "w") as log:
        make = subprocess.Popen(["make", "--no-print-directory", f"step-{number}", "PORT=0"], cwd=steps.parent,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    try:
        server = McpClient(wait_for_url(make, log_path, TIMEOUT))
        session = server.open_session()
        name, arguments = ("create_note", {"title": "Made", "content": "x"}) if number in WRITING_STEPS else (
            "list_notes", {})
        reply = server.send(session, rpc("tools/call", name=name, arguments=arguments)).json()
        assert reply["result"]["isError"] is False, reply
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=10)
    assert "--vault" not in log_path.read_text().splitlines()[0]
    assert files_of(steps / "sample-vault") == tracked
    assert (practice_vault(steps, step) / "Home.md").is_file()
    assert (practice_vault(steps, step) / "Inbox" / "Made.md").is_file() == (number in WRITING_STEPS)
