#!/usr/bin/env python3
"""Show what step N changed since step N-1: `python3 steps/diff.py N [--all]` (make diff-N).

The story comes first: the step's note from steps.toml, where the definitions of
the step before went (the moves steps.toml lists), what is new and what is gone.
Then the changes, file by file in the order steps.toml lists them. Python files
are compared definition by definition, so a function that moved to another file
is compared with what it was; other files are compared whole. Recorded
transcripts (*.out) come last and are only named, unless --all is given.
Only the files steps.toml names for the step are compared: every other file is a
byte-identical copy, which tests/test_snapshots.py makes sure of.

On a terminal, the output goes through `less -R` (or $PAGER), as git does.
"""
import difflib
import re
import signal
import sys
import textwrap

from definitions import Piece
from manifest import Step, find_step, load_steps
from moves import Plan, Ref, plan
from pager import show

HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def step_diff(number: int, transcripts: bool = False) -> list[str]:
    step = find_step(number)
    before = next((s for s in load_steps() if s.number == number - 1), None)
    moves = plan(step, before)
    lines = [f"Step {number}: {step.title} ({step.chapter})\n"] + [p + "\n" for p in moves.problems]
    lines += story(step, before, moves)
    files = [n for n in step.changes if not n.endswith(".out")] + [n for n in step.changes if n.endswith(".out")]
    for name in files:
        if name.endswith(".py") and moves.moved_in_or_out(name):
            lines += code_changes(name, step, before, moves)
        elif name.endswith(".py"):
            lines += banner(name, step, before) + with_definitions(whole_file_diff(name, step, before), moves.new[name])
        elif name.endswith(".out") and not transcripts:
            is_new = before is None or not (before.path / name).exists()
            lines.append(f"{'new' if is_new else 'changed'} transcript: {step.folder}/{name} (--all shows it)\n")
        else:
            lines += whole_file_diff(name, step, before)
    for name in sorted(set(moves.old) - set(moves.new)):  # Python files the step dropped or emptied
        lines += removed_pieces(name, moves, before)
    lines += [f"removed {name}\n" for name in step.removes]
    return lines


def story(step: Step, before: Step | None, moves: Plan) -> list[str]:
    lines = ["\n"]
    if step.note.strip():
        lines += [line + "\n" for line in textwrap.wrap(" ".join(step.note.split()), 84, initial_indent="  ",
                                                        subsequent_indent="  ")] + ["\n"]
    moved = sorted((o, t) for t, o in moves.source.items() if moves.is_move(t))
    if moved:
        lines.append(f"Where step {before.number}'s code went:\n")
        width = max(len(":".join(o)) for o, _ in moved)
        shown = None
        for origin, target in sorted(moved, key=lambda pair: order_in(moves.old, pair[0])):
            left = ":".join(origin) if origin != shown else ""
            lines.append(f"  {left:{width}}  ->  {':'.join(target)}\n")
            shown = origin
        lines.append("\n")
    new = {f: [p.name for p in found if p.is_definition and (f, p.name) not in moves.source]
           for f, found in moves.new.items()}
    lines += name_lists("New definitions:", new)
    gone = {}
    for file, name in moves.gone():
        if any(p.name == name and p.is_definition for p in moves.old[file]):
            gone.setdefault(file, []).append(name)
    lines += name_lists("Gone:", gone)
    return lines + contents(step, before)


def contents(step: Step, before: Step | None) -> list[str]:
    """One line saying what comes below, in order."""
    def status(name: str) -> str:
        return "changed" if before and (before.path / name).is_file() else "new"

    code = [f"{name} ({status(name)})" for name in step.changes if name.endswith(".py")]
    others = [name for name in step.changes if not name.endswith((".py", ".out"))]
    transcripts = [name for name in step.changes if name.endswith(".out")]
    kind = "wire scripts" if all(name.startswith("wire/") for name in others) else "other files"
    parts = code + [f"{len(others)} {kind}"] * bool(others) + [f"{len(transcripts)} transcripts"] * bool(transcripts)
    parts += [f"{len(step.removes)} files removed"] * bool(step.removes)
    wrapped = textwrap.wrap("Below: " + ", ".join(parts) + ".", 88, subsequent_indent="  ")
    return [line + "\n" for line in wrapped] + ["\n"]


def order_in(files: dict[str, list[Piece]], origin: Ref) -> tuple[int, int]:
    names = list(files)
    found = [p.name for p in files.get(origin[0], [])]
    return names.index(origin[0]) if origin[0] in names else 0, found.index(origin[1]) if origin[1] in found else 0


def name_lists(title: str, names: dict[str, list[str]]) -> list[str]:
    names = {file: found for file, found in names.items() if found}
    if not names:
        return []
    width = max(len(file) for file in names)
    lines = [title + "\n"]
    for file, found in names.items():
        wrapped = textwrap.wrap(", ".join(found), 84 - width, break_on_hyphens=False)
        lines += [f"  {file if i == 0 else '':{width}}  {text}\n" for i, text in enumerate(wrapped)]
    return lines + ["\n"]


def code_changes(name: str, step: Step, before: Step | None, moves: Plan) -> list[str]:
    lines = banner(name, step, before)
    old_pieces = {(f, p.name): p for f, found in moves.old.items() for p in found}
    fresh = []  # new pieces waiting to be shown together
    for piece in moves.new[name]:
        origin = moves.source.get((name, piece.name))
        if origin is None:
            fresh.append(piece)
            continue
        lines += added(fresh, name, step)
        fresh = []
        old = old_pieces[origin]
        label_old, label_new = f"{before.folder}/{':'.join(origin)}", f"{step.folder}/{name}:{piece.name}"
        if old.lines == piece.lines and origin != (name, piece.name):
            lines.append(f"= {label_new} is {label_old}, unchanged\n")
        elif old.lines != piece.lines:
            lines += shifted(difflib.unified_diff(old.lines, piece.lines, label_old, label_new, lineterm=""),
                             old.start, piece.start)
    lines += added(fresh, name, step)
    if name in moves.old:
        lines += removed_pieces(name, moves, before, banner=False)
    return lines


def banner(name: str, step: Step, before: Step | None) -> list[str]:
    old_path, new_count = before.path / name if before else None, len((step.path / name).read_text().splitlines())
    if old_path is None or not old_path.is_file():
        return [f"=== {name}: new, {new_count} lines ===\n"]
    return [f"=== {name}: changed, {len(old_path.read_text().splitlines())} -> {new_count} lines ===\n"]


def with_definitions(diff: list[str], found: list[Piece]) -> list[str]:
    """Name the definition each hunk changes after its @@, as git does."""
    lines = list(diff)
    for index, line in enumerate(lines):
        match = HUNK.match(line)
        if not match:
            continue
        number = int(match[3])  # the new side's line of the hunk's first line
        for following in lines[index + 1:]:
            if following[0] != " ":
                break
            number += 1
        # The definition the first changed line is in, or else the next one (lines added before it).
        names = [p.name for p in found if number < p.start + len(p.lines)]
        if names:
            lines[index] = f"{line[:match.end()]} {names[0]}\n"
    return lines


def added(fresh: list[Piece], name: str, step: Step) -> list[str]:
    """New pieces that follow each other, as one hunk of added lines."""
    if not fresh:
        return []
    all_lines = (step.path / name).read_text().splitlines()
    first, last = fresh[0].start, fresh[-1].start + len(fresh[-1].lines) - 1
    names = ", ".join(p.name for p in fresh if p.is_definition)
    names = names if len(names) <= 72 else names[:names.rfind(", ", 0, 72)] + ", ..."
    hunk = f"@@ -0,0 +{first},{last - first + 1} @@" + (f" {names}" if names else "")
    header = ["--- /dev/null\n", f"+++ {step.folder}/{name}\n", hunk + "\n"]
    return header + [f"+{line}\n" for line in all_lines[first - 1:last]]


def removed_pieces(name: str, moves: Plan, before: Step, banner: bool = True) -> list[str]:
    gone_here = set(moves.gone())
    gone = [p for p in moves.old[name] if (name, p.name) in gone_here]
    if not gone:
        return []
    lines = [f"=== {name}: removed ===\n"] if banner else []
    for piece in gone:
        lines += [f"--- {before.folder}/{name}:{piece.name}\n", "+++ /dev/null\n"]
        lines.append(f"@@ -{piece.start},{len(piece.lines)} +0,0 @@\n")
        lines += [f"-{line}\n" for line in piece.lines]
    return lines


def shifted(diff, old_start: int, new_start: int) -> list[str]:
    """A diff of two pieces, with hunk line numbers counted in their files."""
    lines = []
    for line in diff:
        match = HUNK.match(line)
        if match:
            old_at, new_at = int(match[1]) + old_start - 1, int(match[3]) + new_start - 1
            line = f"@@ -{old_at}{match[2] or ''} +{new_at}{match[4] or ''} @@{line[match.end():]}"
        lines.append(line + "\n")
    return lines


def whole_file_diff(name: str, step: Step, before: Step | None) -> list[str]:
    old_path = before.path / name if before else None
    old = old_path.read_text().splitlines(keepends=True) if old_path and old_path.exists() else []
    new = (step.path / name).read_text().splitlines(keepends=True)
    old_label = f"{before.folder}/{name}" if old else "/dev/null"
    return list(difflib.unified_diff(old, new, old_label, f"{step.folder}/{name}"))


def main() -> int:
    args = sys.argv[1:]
    show_all = "--all" in args
    numbers = [a for a in args if a != "--all"]
    if len(numbers) != 1 or not numbers[0].isdigit():
        print("usage: python3 steps/diff.py N [--all]", file=sys.stderr)
        return 2
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    show(step_diff(int(numbers[0]), transcripts=show_all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
