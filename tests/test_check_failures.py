"""`make check` fails when it should, and says why: the real tools, run on copies of
the steps in a temporary folder and broken on purpose, one way at a time."""
import dataclasses
import shutil
import subprocess
import sys

import pytest

from check import check, transcripts
from launch import running_server
from manifest import STEPS_DIR, find_step, load_steps
from replay import curl_available, normalise, run_with_curl, run_with_python

TOOLS = ["check.py", "launch.py", "manifest.py", "replay.py"]


def copy_of(step, tmp_path):
    """A copy of a step's folder under tmp_path, and the Step that points at it."""
    copy = tmp_path / step.folder
    shutil.copytree(step.path, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return dataclasses.replace(step, folder=str(copy))  # an absolute folder wins over steps/


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path.name}"
    path.write_text(text.replace(old, new, 1))


# One transcript, one difference

WHITESPACE_EDITS = {
    "trailing-space": lambda text: text.replace("\n<\n", "\n< \n", 1),
    "double-space": lambda text: text.replace('"id": 1, ', '"id": 1,  ', 1),
    "tab": lambda text: text.replace('"id": 1, ', '"id": 1,\t', 1),
    "blank-line-at-the-end": lambda text: text + "\n",
    "space-at-the-end": lambda text: text + " ",
    "no-newline-at-the-end": lambda text: text.rstrip("\n"),
}


@pytest.mark.parametrize("change", WHITESPACE_EDITS.values(), ids=WHITESPACE_EDITS.keys())
def test_check_fails_on_a_transcript_that_differs_only_in_whitespace(tmp_path, capsys, change):
    step = copy_of(find_step(1), tmp_path)
    out_path = step.path / "wire" / "01-initialize.out"
    text = out_path.read_text()
    assert change(text) != text
    out_path.write_text(change(text))
    assert check(step, use_curl=False, update=False) is False
    printed = capsys.readouterr().out
    assert "DIFFERS  01-raw-dispatcher/wire/01-initialize.out" in printed
    assert "ok       01-raw-dispatcher/wire/02-initialized.out" in printed  # only the edited one


def test_check_fails_when_client_out_drifts(tmp_path, capsys):
    step = copy_of(find_step(3), tmp_path)
    edit(step.path / "client.out", '"hello over stdio"}], "isError"', '"hello over HTTP"}], "isError"')
    assert check(step, use_curl=False, update=False) is False
    printed = capsys.readouterr().out
    assert "DIFFERS  03-stdio-and-stateless/client.out" in printed
    assert "-<<< " in printed and "hello over HTTP" in printed  # the diff shows both sides
    assert "+<<< " in printed and "hello over stdio" in printed


def test_check_runs_a_program_with_a_recorded_out_and_fails_when_it_drifts(tmp_path, capsys):
    step = copy_of(find_step(6), tmp_path)
    edit(step.path / "offline_demo.out", "query: how do I know", "query: how would I know")
    assert check(step, use_curl=False, update=False) is False
    printed = capsys.readouterr().out
    assert "DIFFERS  06-embeddings/offline_demo.out" in printed
    assert "-query: how would I know" in printed and "+query: how do I know" in printed


def test_check_fails_on_a_wire_script_without_a_transcript(tmp_path, capsys):
    step = copy_of(find_step(1), tmp_path)
    shutil.copy(step.path / "wire" / "04-ping.sh", step.path / "wire" / "09-ping-again.sh")
    assert check(step, use_curl=False, update=False) is False
    assert "DIFFERS  01-raw-dispatcher/wire/09-ping-again.out" in capsys.readouterr().out


def test_check_replays_every_numbered_script_however_many_there_are(tmp_path, capsys):
    # Scripts 10 and up sort after 09 only by name; they are replayed like the rest.
    step = copy_of(find_step(1), tmp_path)
    wire = step.path / "wire"
    for number in (10, 11, 100):
        shutil.copy(wire / "04-ping.sh", wire / f"{number}-ping.sh")
        shutil.copy(wire / "04-ping.out", wire / f"{number}-ping.out")
    edit(wire / "100-ping.out", "pong", "pang")
    assert check(step, use_curl=False, update=False) is False
    printed = capsys.readouterr().out
    assert "ok       01-raw-dispatcher/wire/11-ping.out" in printed
    assert "DIFFERS  01-raw-dispatcher/wire/100-ping.out" in printed


@pytest.mark.drift
@pytest.mark.parametrize("step", load_steps(), ids=lambda s: s.folder)
def test_every_wire_script_of_a_step_is_replayed(step):
    shell_scripts = {p.name for p in (step.path / "wire").glob("*.sh")} - {"lib.sh"}
    assert {p.name for p in step.wire_scripts()} == shell_scripts, "a wire script the check would not replay"


# Session ids: they vary, so they are hidden; but only the ones this run handed out

def two_scripts_of_step2(tmp_path):
    """Step 2's initialize and initialized scripts alone: the second sends the session the first got."""
    step = copy_of(find_step(2), tmp_path)
    for script in step.wire_scripts():
        if not script.name.startswith(("01-", "03-")):
            script.unlink()
            script.with_suffix(".out").unlink()
    return step


@pytest.mark.parametrize("mode", ["curl", "python"])
def test_a_session_id_from_an_earlier_script_is_sent_and_hidden_in_later_transcripts(tmp_path, mode):
    if mode == "curl" and not curl_available():
        pytest.skip("curl is not installed")
    step = two_scripts_of_step2(tmp_path)
    later = transcripts(step, use_curl=(mode == "curl"))[step.path / "wire" / "03-initialized.out"]
    assert "> Mcp-Session-Id: <session-id>\n" in later
    assert "202 Accepted" in later  # the session was carried over, so the server knew it
    assert later == (step.path / "wire" / "03-initialized.out").read_text()


def test_normalise_hides_ids_handed_out_in_earlier_transcripts():
    seen = set()
    first = normalise("< HTTP/1.1 200 OK\n< Mcp-Session-Id: abc-123_X\n<\n{}\n", None, seen)
    later = normalise('> Mcp-Session-Id: abc-123_X\n<\n{"error": "session abc-123_X ended"}\n', None, seen)
    assert first == "< HTTP/1.1 200 OK\n< Mcp-Session-Id: <session-id>\n<\n{}\n"
    assert later == '> Mcp-Session-Id: <session-id>\n<\n{"error": "session <session-id> ended"}\n'


def test_normalise_leaves_an_id_no_server_handed_out_as_it_is():
    assert normalise("> Mcp-Session-Id: stale-id\n", None, set()) == "> Mcp-Session-Id: stale-id\n"


def test_check_fails_when_a_transcript_holds_a_session_id_from_an_earlier_run(tmp_path, capsys):
    step = two_scripts_of_step2(tmp_path)
    edit(step.path / "wire" / "03-initialized.out", "<session-id>", "kE3kz2Yf0lTqB9vM6wX1cR8nH4jS7pD5aG0uL2oI9eQ")
    assert check(step, use_curl=False, update=False) is False
    assert "DIFFERS  02-protocol-and-sessions/wire/03-initialized.out" in capsys.readouterr().out


# $SESSION before any initialize: bash expands it to nothing, and the replay must agree

def test_an_unset_session_leaves_the_header_out_as_bash_does(tmp_path):
    script = tmp_path / "01-too-soon.sh"
    shutil.copy(find_step(2).path / "wire" / "lib.sh", tmp_path / "lib.sh")
    script.write_text(
        '. "$(dirname "$0")/lib.sh"\n'
        "post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "
        "\"Mcp-Session-Id: $SESSION\" <<'JSON'\n"
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}\nJSON\n'
    )
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    with running_server(find_step(2).server) as (url, _log):
        by_python = run_with_python(script, url, {})
        by_bash = run_with_curl(script, url, state_dir) if curl_available() else by_python
    assert "Mcp-Session-Id" not in by_python.partition("\n<")[0]  # not sent
    assert "400 Bad Request" in by_python
    assert "Mcp-Session-Id header required (initialize first)" in by_python
    assert by_python == by_bash


# The command: a non-zero exit when any step fails, and every step still checked

def repository_with_two_steps(tmp_path):
    """A repository in tmp_path with the real check tools and two copies of step 1."""
    steps_dir = tmp_path / "steps"
    steps_dir.mkdir()
    for tool in TOOLS:
        shutil.copy(STEPS_DIR / tool, steps_dir / tool)
    step = find_step(1)
    entries = []
    for number, folder in [(1, "01-first"), (2, "02-second")]:
        shutil.copytree(step.path, steps_dir / folder, ignore=shutil.ignore_patterns("__pycache__"))
        entries.append(
            f'[[step]]\nnumber = {number}\nfolder = "{folder}"\ntitle = "t"\nchapter = "c"\nchanges = []\n'
        )
    (steps_dir / "steps.toml").write_text("\n".join(entries))
    return steps_dir


def run_check(steps_dir, *args):
    return subprocess.run(
        [sys.executable, str(steps_dir / "check.py"), "--no-curl", *args],
        capture_output=True, text=True, timeout=120,
    )


def test_check_of_two_good_steps_exits_0(tmp_path):
    done = run_check(repository_with_two_steps(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "step 1 (01-first)" in done.stdout and "step 2 (02-second)" in done.stdout
    assert "DIFFERS" not in done.stdout


@pytest.mark.parametrize("broken,fine", [("01-first", "02-second"), ("02-second", "01-first")])
def test_check_exits_1_when_one_step_of_several_fails(tmp_path, broken, fine):
    steps_dir = repository_with_two_steps(tmp_path)
    edit(steps_dir / broken / "wire" / "04-ping.out", "pong", "pang")
    done = run_check(steps_dir)
    assert done.returncode == 1
    assert f"DIFFERS  {broken}/wire/04-ping.out" in done.stdout
    assert f"ok       {fine}/wire/04-ping.out" in done.stdout  # the other step was checked too
    assert "--update && make guide" in done.stdout  # and the reader is told what to do


def test_check_of_an_unknown_step_says_so_and_exits_non_zero(tmp_path):
    done = run_check(repository_with_two_steps(tmp_path), "7")
    assert done.returncode != 0
    assert "There is no step 7 in steps/steps.toml." in done.stderr

