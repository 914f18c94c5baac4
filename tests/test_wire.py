"""Every step's wire scripts, replayed against its server, match the recorded transcripts."""
import dataclasses
import os
import shutil
import subprocess
import sys

import pytest

from check import check, transcripts
from manifest import ROOT, load_steps
from replay import curl_available, parse_script

STEPS = [step for step in load_steps() if step.wire_scripts()]
MODES = ["curl", "python"]


@pytest.mark.drift
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.folder)
def test_transcripts_match(step, mode):
    if mode == "curl" and not curl_available():
        pytest.skip("curl is not installed; the python replay covers this step")
    for out_path, actual in transcripts(step, use_curl=(mode == "curl")).items():
        assert out_path.exists(), f"{out_path} is missing: record it with steps/check.py --update"
        assert actual == out_path.read_text(), f"{out_path.name} differs; run make check-{step.number}"


@pytest.mark.drift
@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.folder)
def test_every_script_is_readable_by_the_python_replay(step):
    for script in step.wire_scripts():
        calls = parse_script(script)
        assert calls, f"{script.name} makes no request the replay understands"
        assert os.access(script, os.X_OK), f"{script.name} is not executable"
        assert script.with_suffix(".out").exists()


def test_parse_script_reads_headers_and_heredoc_body(tmp_path):
    script = tmp_path / "01-x.sh"
    script.write_text(
        "#!/usr/bin/env bash\n# comment post 'x'\n. lib.sh\n\n"
        "post 'Content-Type: application/json' \"Mcp-Session-Id: $SESSION\" <<'JSON'\n"
        '{"a": 1,\n "b": 2}\nJSON\n'
        "send DELETE 'Accept: */*'\n"
    )
    body = '{"a": 1,\n "b": 2}'
    assert parse_script(script) == [
        ("POST", ["Content-Type: application/json", "Mcp-Session-Id: $SESSION"], body, body),
        ("DELETE", ["Accept: */*"], "", ""),
    ]


def run_check(*args, env=None):
    return subprocess.run(
        [sys.executable, str(ROOT / "steps" / "check.py"), *args],
        capture_output=True, text=True, env=env, timeout=120,
    )


@pytest.mark.drift
def test_make_check_passes_without_curl_on_the_path(tmp_path):
    # A PATH with python but no curl: the check must fall back to the Python replay.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    (bin_dir / "bash").symlink_to("/bin/bash")
    done = run_check(env={**os.environ, "PATH": str(bin_dir)})  # every step
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Python (no curl)" in done.stdout


def test_check_fails_with_a_diff_and_a_hint_when_a_transcript_differs(tmp_path, capsys):
    # A copy of step 1 whose first transcript was tampered with.
    step = load_steps()[0]
    copy = tmp_path / step.folder
    shutil.copytree(step.path, copy)
    out_path = copy / "wire" / "01-initialize.out"
    out_path.write_text(out_path.read_text().replace('"vault-mcp"', '"another-server"'))
    tampered = dataclasses.replace(step, folder=str(copy))  # an absolute folder wins
    assert check(tampered, use_curl=False, update=False) is False
    printed = capsys.readouterr().out
    assert "DIFFERS  " in printed and "01-initialize.out" in printed
    assert '-{"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", ' in printed
    assert "another-server" in printed
    # A reader is sent to a scratch copy first; recording anew is for maintainers only.
    reader, _, maintainer = printed.partition("Maintaining the guide")
    assert "make try-1" in reader and "make exercise-1.K" in reader and "git restore" in reader
    assert "--update" not in reader and "make guide" not in reader
    assert "python3 steps/check.py 1 --update && make guide" in maintainer


def test_check_update_records_a_missing_transcript(tmp_path, capsys):
    step = load_steps()[0]
    copy = tmp_path / step.folder
    shutil.copytree(step.path, copy)
    (copy / "wire" / "05-echo.out").unlink()
    fresh = dataclasses.replace(step, folder=str(copy))
    assert check(fresh, use_curl=False, update=True) is True
    assert (copy / "wire" / "05-echo.out").read_text() == (step.path / "wire" / "05-echo.out").read_text()
