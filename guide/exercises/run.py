#!/usr/bin/env python3
"""Check an exercise on your scratch copy of its step, or apply its worked solution.

    python3 guide/exercises/run.py 1.2              check exercise 2 of chapter 1 (make exercise-1.2)
    python3 guide/exercises/run.py 1.2 --solve      apply its solution to your copy (make solve-1.2)
    python3 guide/exercises/run.py 1.2 --folder D   check the copy of step 1 in folder D instead
    python3 guide/exercises/run.py --list           every exercise
    python3 guide/exercises/run.py 1.2 --record D   write solution.diff from the solved copy in D, with
                                    [--context N]   N lines of context (3 unless told; for maintainers)

Exercise K of chapter N lives in guide/exercises/NN-step/K-name/: check.py says
what the exercise asks for, solution.diff is one way to do it. Your copy is
steps/scratch/NN-step/, made by `make try-N`.
"""
import argparse
import contextlib
import dataclasses
import difflib
import importlib.util
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

EXERCISES_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(EXERCISES_DIR.parent.parent / "steps"))
from launch import running_server  # noqa: E402
from manifest import SAMPLE_VAULT, Step, load_steps  # noqa: E402
from patch import PatchError, apply, parse  # noqa: E402
from probe import Missing, Server  # noqa: E402
from scratch_copy import make_copy, scratch_path, shown  # noqa: E402


@dataclass
class Exercise:
    step: Step
    number: int
    path: Path  # guide/exercises/NN-step/K-name

    @property
    def id(self) -> str:
        return f"{self.step.number}.{self.number}"

    @property
    def solution(self) -> Path:
        return self.path / "solution.diff"

    @property
    def title(self) -> str:
        """The first line of check.py's docstring."""
        return self.load_check().__doc__.strip().splitlines()[0]

    def load_check(self):
        spec = importlib.util.spec_from_file_location(f"check_{self.step.number}_{self.number}", self.path / "check.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def all_exercises() -> list[Exercise]:
    found = []
    for step in load_steps():
        folders = (EXERCISES_DIR / step.folder).glob("[0-9]*-*")
        for path in sorted(folders, key=lambda p: int(p.name.partition("-")[0])):
            found.append(Exercise(step, int(path.name.partition("-")[0]), path))
    return found


def find_exercise(wanted: str) -> Exercise:
    exercises = all_exercises()
    for exercise in exercises:
        if exercise.id == wanted:
            return exercise
    known = ", ".join(e.id for e in exercises)
    raise SystemExit(f"There is no exercise {wanted}. N.K is exercise K of chapter N; there are: {known}")


def check(exercise: Exercise, folder: Path) -> bool:
    """Start the copy in folder, run the exercise's check against it, say what is missing."""
    print(f"Exercise {exercise.id}: {exercise.title}")
    print(f"checking {shown(folder)}")
    try:
        with vault_args(exercise.step) as args, running_server(folder / "server.py", *args) as (url, log_path):
            try:
                exercise.load_check().check(Server(url, folder))
            except Missing as missing:
                print(f"  MISSING  {missing}")
                return not_yet(exercise)
            except OSError as error:  # refused, reset, timed out: the server broke
                print(f"  The server stopped answering ({error}). The end of its log:")
                print(indent(log_path.read_text().splitlines()[-15:]))
                return not_yet(exercise)
            except Exception as error:  # an answer of a shape the check did not foresee
                print(f"  The check could not make sense of an answer ({type(error).__name__}: {error}).")
                return not_yet(exercise)
    except RuntimeError as error:  # it did not start: a syntax error, say
        print("  The server did not start. The end of its log:")
        print(indent(str(error).splitlines()[1:][-15:]))  # the first line says it did not start
        return not_yet(exercise)
    print(f"Solved: exercise {exercise.id} works on {shown(folder)}.")
    return True


@contextlib.contextmanager
def vault_args(step: Step):
    """--vault and a fresh copy of the sample vault for one check, for a step that reads
    one: the repository's own is never served, and the reader's in steps/scratch/ may
    have changed."""
    if not step.vault:
        yield []
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield ["--vault", str(shutil.copytree(SAMPLE_VAULT, Path(tmp) / "vault"))]


def not_yet(exercise: Exercise) -> bool:
    print(f"Not solved yet. The exercise is in {exercise.step.chapter} (Exercises); a worked solution is")
    print(f"{shown(exercise.solution)}, and make solve-{exercise.id} applies it to your copy.")
    return False


def indent(lines: list[str]) -> str:
    return "\n".join("    " + line for line in lines)


def solve(exercise: Exercise, folder: Path) -> bool:
    """Apply the worked solution to the copy in folder."""
    try:
        changed = apply(parse(exercise.solution.read_text()), folder)
    except PatchError as error:
        print(f"The solution of exercise {exercise.id} does not apply to {shown(folder)}:\n  {error}")
        print(f"Your copy differs from step {exercise.step.number} where the solution changes it. Apply "
              f"{shown(exercise.solution)} by hand, or start again from a fresh copy with make "
              f"reset-{exercise.step.number} (your changes are lost).")
        return False
    print(f"Applied {shown(exercise.solution)} to {shown(folder)}: changed {', '.join(changed)}.")
    print(f"make exercise-{exercise.id} checks it; make try-{exercise.step.number} runs it.")
    return True


def record(exercise: Exercise, folder: Path, context: int = 3) -> str:
    """The diff from the step to the solved copy in folder, as solution.diff keeps it."""
    step, copy = exercise.step, dataclasses.replace(exercise.step, folder=str(folder.resolve()))
    if step.files() - copy.files():
        missing = sorted(step.files() - copy.files())
        raise SystemExit(f"{shown(folder)} lacks {missing}: a solution adds and changes files, and removes none")
    lines = []
    for name in sorted(copy.files()):
        new = (folder / name).read_text().splitlines(keepends=True)
        old = (step.path / name).read_text().splitlines(keepends=True) if name in step.files() else []
        lines += difflib.unified_diff(old, new, f"a/{name}" if old else "/dev/null", f"b/{name}", n=context)
    if any(not line.endswith("\n") for line in lines):
        raise SystemExit("a file of the copy does not end with a newline; add one, then record again")
    return "".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercise", nargs="?", help="N.K: exercise K of chapter N")
    parser.add_argument("--solve", action="store_true", help="apply the worked solution to your copy")
    parser.add_argument("--folder", type=Path, help="the copy to use (default: your scratch copy)")
    parser.add_argument("--list", action="store_true", help="list every exercise")
    parser.add_argument("--record", type=Path, metavar="FOLDER", help="write solution.diff from a solved copy")
    parser.add_argument("--context", type=int, default=3, help="lines of context around each change (--record)")
    args = parser.parse_args()
    if args.list or not args.exercise:
        for exercise in all_exercises():
            print(f"{exercise.id:5} {exercise.title}  ({shown(exercise.path)})")
        return 0
    exercise = find_exercise(args.exercise)
    if args.record:
        exercise.solution.write_text(record(exercise, args.record, args.context))
        print(f"wrote {shown(exercise.solution)}")
        return 0
    folder = args.folder or scratch_path(exercise.step)
    if args.solve:
        if args.folder is None:
            make_copy(exercise.step)
        return 0 if solve(exercise, folder) else 1
    if not (folder / "server.py").is_file():
        number = exercise.step.number
        print(f"There is no copy of step {number} in {shown(folder)} yet: make try-{number} makes one, and runs it.")
        return 1
    return 0 if check(exercise, folder) else 1


if __name__ == "__main__":
    sys.exit(main())
