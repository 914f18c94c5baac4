"""Apply a unified diff (what `diff -u` and `git diff` print) to a folder.

A worked solution is kept as a diff against its step, so it shows only the lines
that matter. This applier is strict on purpose: every context and removed line
must match the file exactly. A hunk may sit at another line number than its header
says (the step may have grown above it), but only where its lines occur exactly
once; otherwise it fails and says which file, which hunk and which line differ.
Nothing is written unless every hunk of every file applies.
"""
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
NO_NEWLINE = "\\ No newline at end of file"


class PatchError(Exception):
    pass


@dataclass
class Hunk:
    header: str
    old_start: int  # the header's line number; 0 when the old side is empty
    old: list[str] = field(default_factory=list)  # the lines it expects: context and removed
    new: list[str] = field(default_factory=list)  # the lines it leaves: context and added


@dataclass
class FilePatch:
    path: str  # relative to the folder the diff applies to
    creates: bool  # the old side is /dev/null
    hunks: list[Hunk] = field(default_factory=list)
    new_ends_without_newline: bool = False


def parse(text: str) -> list[FilePatch]:
    """Split a unified diff into files and hunks, checking each hunk's line counts."""
    patches, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if not (lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
            i += 1  # a line between files: `diff --git ...`, `index ...`, commentary
            continue
        old_name, new_name = name_of(lines[i]), name_of(lines[i + 1])
        if new_name == "/dev/null":
            raise PatchError(f"{old_name}: the diff deletes this file, which this applier does not do")
        patch = FilePatch(safe_path(new_name), creates=old_name == "/dev/null")
        i += 2
        while i < len(lines) and lines[i].startswith("@@"):
            i = read_hunk(lines, i, patch)
        if not patch.hunks:
            raise PatchError(f"{patch.path}: no hunk (@@ ... @@) follows the file names")
        patches.append(patch)
    if not patches:
        raise PatchError("this is not a unified diff: no '--- ' and '+++ ' lines")
    return patches


def name_of(line: str) -> str:
    name = line[4:].split("\t")[0].strip()  # diff -u appends a tab and a date
    return name if name == "/dev/null" else name.removeprefix("a/").removeprefix("b/")


def safe_path(name: str) -> str:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise PatchError(f"{name}: a diff may only change files inside the folder it applies to")
    return path.as_posix()


def read_hunk(lines: list[str], i: int, patch: FilePatch) -> int:
    """Read the hunk starting at lines[i] into patch; return the index after it."""
    match = HUNK_HEADER.match(lines[i])
    if not match:
        raise PatchError(f"{patch.path}: a broken hunk header: {lines[i]!r}")
    old_count = int(match[2]) if match[2] is not None else 1
    new_count = int(match[4]) if match[4] is not None else 1
    hunk = Hunk(lines[i], int(match[1]))
    i += 1
    while i < len(lines) and (len(hunk.old) < old_count or len(hunk.new) < new_count):
        line = lines[i]
        kind, text = (line[:1], line[1:]) if line else (" ", "")  # an editor may strip a blank context line
        if kind in " -":
            hunk.old.append(text)
        if kind in " +":
            hunk.new.append(text)
        if kind not in " -+":
            break
        i += 1
        if i < len(lines) and lines[i] == NO_NEWLINE:
            patch.new_ends_without_newline = kind in " +"
            i += 1
    if (len(hunk.old), len(hunk.new)) != (old_count, new_count):
        raise PatchError(
            f"{patch.path}: hunk {hunk.header} promises {old_count} old and {new_count} new lines "
            f"but holds {len(hunk.old)} and {len(hunk.new)}"
        )
    patch.hunks.append(hunk)
    return i


def apply(patches: list[FilePatch], folder: Path) -> list[str]:
    """Apply every file's hunks inside folder; return the paths changed. All or nothing."""
    results = {patch.path: patched_text(patch, folder) for patch in patches}
    for path, text in results.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return list(results)


def patched_text(patch: FilePatch, folder: Path) -> str:
    target = folder / patch.path
    if patch.creates:
        if target.exists():
            raise PatchError(f"{patch.path}: the diff creates this file, but it exists already")
        lines = []
    elif not target.is_file():
        raise PatchError(f"{patch.path}: no such file in {folder}")
    else:
        lines = target.read_text().splitlines()
    start = 0  # hunks apply in order; none may reach back into the one before
    for hunk in patch.hunks:
        at = locate(hunk, lines, start, patch.path)
        lines[at:at + len(hunk.old)] = hunk.new
        start = at + len(hunk.new)
    text = "\n".join(lines)
    return text if patch.new_ends_without_newline or not lines else text + "\n"


def locate(hunk: Hunk, lines: list[str], start: int, path: str) -> int:
    """Where the hunk's old lines are: at the header's line if they match there,
    else at their one exact occurrence after `start`."""
    size = len(hunk.old)
    stated = max(hunk.old_start - 1, 0) if size else hunk.old_start  # an empty old side inserts after that line
    if stated >= start and lines[stated:stated + size] == hunk.old:
        return stated
    found = [at for at in range(start, len(lines) - size + 1) if lines[at:at + size] == hunk.old]
    if len(found) == 1:
        return found[0]
    if found:
        lines_at = ", ".join(str(at + 1) for at in found)
        raise PatchError(f"{path}: hunk {hunk.header} is not where it says, and its lines occur at {lines_at}")
    raise PatchError(f"{path}: hunk {hunk.header} does not apply: {first_difference(hunk, lines, stated)}")


def first_difference(hunk: Hunk, lines: list[str], stated: int) -> str:
    for offset, expected in enumerate(hunk.old):
        number = stated + offset + 1
        actual = lines[stated + offset] if stated + offset < len(lines) else None
        if actual != expected:
            found = "the file ends there" if actual is None else f"it is\n      {actual!r}"
            return f"line {number} should be\n      {expected!r}\n    but {found}"
    return "its lines are not in the file"
