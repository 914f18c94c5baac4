#!/usr/bin/env python3
"""Check a step against its recorded wire transcripts.

    python3 steps/check.py 1          start step 1, replay wire/*.sh, run client.py where a
                                      step has one (and any program NAME.py with a NAME.out
                                      beside it), compare with the recorded *.out
    python3 steps/check.py            every step
    python3 steps/check.py 1 --update record the transcripts anew (then run `make guide`); for
                                      whoever maintains the guide, never for an exercise:
                                      those are done on a scratch copy (make try-N)
    python3 steps/check.py 1 --no-curl replay with Python even where curl exists

The server runs on a free port with a copy of the sample vault, so a check never
collides with a server you started yourself and never writes into the repository.
"""
import argparse
import difflib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from launch import READERS_EMBEDDER, quiet_environment, running_server
from manifest import SAMPLE_VAULT, Step, find_step, load_steps
from replay import curl_available, normalise, run_with_curl, run_with_python


def transcripts(step: Step, use_curl: bool) -> dict[Path, str]:
    """Run the step's server and every wire script; map each .out path to its text."""
    with tempfile.TemporaryDirectory() as tmp:
        vault, args = Path(tmp) / "vault", []
        if step.vault:
            shutil.copytree(SAMPLE_VAULT, vault)
            pin_times(vault)
            args = ["--vault", str(vault)]
        state_dir, state, session_ids = Path(tmp) / "state", {"MCP_VAULT": str(vault)}, set()
        state_dir.mkdir()
        with running_server(step.server, *args, embedder=READERS_EMBEDDER) as (url, _log):
            results = {}
            for script in step.wire_scripts():
                if use_curl:
                    text = run_with_curl(script, url, state_dir, vault)
                else:
                    text = run_with_python(script, url, state)
                results[script.with_suffix(".out")] = normalise(text, vault, session_ids)
        for program in recorded_programs(step):
            done = subprocess.run([sys.executable, str(program), *program_args(step, program, Path(tmp))],
                                  capture_output=True, text=True, timeout=60,
                                  env=quiet_environment(str(Path(tmp) / f"{program.stem}-index"), READERS_EMBEDDER))
            results[program.with_suffix(".out")] = done.stdout
        return results


PINNED_AT = 1_775_034_000  # 2026-04-01T09:00:00Z


def pin_times(vault: Path) -> None:
    """Give every file of the copy a modification time of its own, the same on every run
    and every machine (a checkout's times are the clone's): list_notes shows them. Each
    is a minute of the week from PINNED_AT that its path's hash picks, as
    scratch_vault.pin_times (step 4 on) gives a reader's practice vault: the reader's
    answers and the transcripts agree."""
    for file in vault.rglob("*"):
        if file.is_file():
            digest = hashlib.sha256(file.relative_to(vault).as_posix().encode()).digest()
            moment = PINNED_AT + 60 * (int.from_bytes(digest[:4], "big") % (7 * 24 * 60))
            os.utime(file, (moment, moment))


def program_args(step: Step, program: Path, tmp: Path) -> list[str]:
    """client.py passes these to its server: a fresh copy of the sample vault of its own,
    since the wire scripts have written into theirs, and the reader's copy in
    steps/scratch/, which the server would open by default, may hold anything."""
    if not step.vault or program.name != "client.py":
        return []
    vault = tmp / "client-vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    pin_times(vault)
    return ["--vault", str(vault)]


def recorded_programs(step: Step) -> list[Path]:
    """The step's Python programs whose output is recorded beside them: client.py (a
    stdio conversation, in client.out) wherever a step has one, and any other NAME.py
    with a NAME.out (step 6's offline_demo.py)."""
    found = {step.path / "client.py"} | {out.with_suffix(".py") for out in step.path.glob("*.out")}
    return sorted(program for program in found if program.exists())


def check(step: Step, use_curl: bool, update: bool) -> bool:
    how = "curl" if use_curl else "Python (no curl)"
    print(f"step {step.number} ({step.folder}), replayed with {how}")
    ok = True
    for out_path, actual in transcripts(step, use_curl).items():
        name = out_path.relative_to(step.path.parent)
        expected = out_path.read_text() if out_path.exists() else None
        if actual == expected:
            print(f"  ok       {name}")
        elif update:
            out_path.write_text(actual)
            print(f"  recorded {name}")
        else:
            ok = False
            print(f"  DIFFERS  {name}")
            diff = difflib.unified_diff(
                (expected or "").splitlines(keepends=True),
                actual.splitlines(keepends=True),
                "expected (" + out_path.name + ")",
                "actual",
            )
            sys.stdout.writelines("           " + line for line in diff)
    if not ok:
        print(advice(step))
    return ok


def advice(step: Step) -> str:
    """What to do about a difference. Readers come first: for them the step is read-only,
    and recording new transcripts would overwrite what the chapter shows."""
    n, name = step.number, Path(step.folder).name
    folder = f"steps/{name}"
    return (
        f"\n  The server answered differently from the recorded transcript: the lines marked +\n"
        f"  above are what it says now.\n"
        f"  Reading the guide, or doing an exercise? Leave {folder} as it is:\n"
        f"    - exercises are done on a scratch copy: make try-{n}, then edit steps/scratch/{name}/\n"
        f"      and check your work with make exercise-{n}.K (K is the exercise's number);\n"
        f"    - git diff {folder} shows what changed here, git restore {folder} undoes it.\n"
        f"  Maintaining the guide, and changed step {n} on purpose? Record the new answers,\n"
        f"  then refresh the chapters that quote them, and read both diffs before committing:\n"
        f"      python3 steps/check.py {n} --update && make guide"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps", nargs="*", type=int, help="step numbers (default: all)")
    parser.add_argument("--update", action="store_true", help="record transcripts anew")
    parser.add_argument("--no-curl", action="store_true", help="replay with Python only")
    args = parser.parse_args()
    steps = [find_step(n) for n in args.steps] if args.steps else load_steps()
    use_curl = curl_available() and not args.no_curl
    results = [check(step, use_curl, args.update) for step in steps]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
