#!/usr/bin/env python3
"""Show what step N changed since step N-1: `python3 steps/diff.py N` (make diff-N).

Only the files steps.toml names for the step are compared; every other file is a
byte-identical copy, which tests/test_snapshots.py makes sure of. Code comes first;
recorded transcripts (*.out) are listed by name unless --all is given.
"""
import difflib
import signal
import sys

from manifest import find_step, load_steps

COLOURS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}


def step_diff(number: int, transcripts: bool = False) -> list[str]:
    step = find_step(number)
    before = next((s for s in load_steps() if s.number == number - 1), None)
    lines = [f"Step {number}: {step.title} ({step.chapter})\n"]
    # Code first, then the rest, then the recorded transcripts.
    ordered = sorted(step.changes, key=lambda name: (not name.endswith(".py"), name.endswith(".out"), name))
    for name in ordered:
        if name.endswith(".out") and not transcripts:
            is_new = before is None or not (before.path / name).exists()
            lines.append(f"{'new' if is_new else 'changed'} transcript: {step.folder}/{name} (--all shows it)\n")
            continue
        old_path = before.path / name if before else None
        old = old_path.read_text().splitlines(keepends=True) if old_path and old_path.exists() else []
        new = (step.path / name).read_text().splitlines(keepends=True)
        old_label = f"{before.folder}/{name}" if old else "/dev/null"
        lines += difflib.unified_diff(old, new, old_label, f"{step.folder}/{name}")
    lines += [f"removed {name}\n" for name in step.removes]
    return lines


def main() -> int:
    args = sys.argv[1:]
    show_all = "--all" in args
    numbers = [a for a in args if a != "--all"]
    if len(numbers) != 1 or not numbers[0].isdigit():
        print("usage: python3 steps/diff.py N [--all]", file=sys.stderr)
        return 2
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head or less
    colour = sys.stdout.isatty()
    for line in step_diff(int(numbers[0]), transcripts=show_all):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        start = COLOURS.get(line[0], "") if colour and not line.startswith(("+++", "---")) else ""
        sys.stdout.write(f"{start}{line}\033[0m" if start else line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
