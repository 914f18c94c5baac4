#!/usr/bin/env python3
"""A reader's scratch copy of a step: the place to do the exercises.

    python3 steps/scratch_copy.py N          copy step N to steps/scratch/NN-name/, unless
                                             the copy is already there (make try-N)
    python3 steps/scratch_copy.py N --reset  throw the copy away (make reset-N)

steps/scratch/ is ignored by git, and nothing that checks the steps looks inside
it, so a copy may be broken freely: the step itself, its transcripts and its
chapter stay as they are.
"""
import argparse
import shutil
import sys
from pathlib import Path

from manifest import ROOT, STEPS_DIR, Step, find_step, shared_data

SCRATCH_DIR = STEPS_DIR / "scratch"


def scratch_path(step: Step, scratch_dir: Path = SCRATCH_DIR) -> Path:
    return scratch_dir / Path(step.folder).name


def make_copy(step: Step, scratch_dir: Path = SCRATCH_DIR) -> tuple[Path, bool]:
    """The step's copy, made now if it is missing; and whether it was made now.
    An existing copy is left alone: it holds the reader's work."""
    copy = scratch_path(step, scratch_dir)
    if copy.exists():
        return copy, False
    for name in sorted(step.files()):
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(step.path / name, target)  # copy2 keeps the wire scripts executable
    share_data(scratch_dir)
    return copy, True


def share_data(scratch_dir: Path) -> None:
    """The shared data folder beside the copies, where a step looks for it (../data/):
    copied once, for every scratch copy to read."""
    folder, files, _origin = shared_data()
    for name in files:
        target = scratch_dir / folder.name / name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / name, target)


def reset(step: Step, scratch_dir: Path = SCRATCH_DIR) -> bool:
    """Throw the copy away; False when there was none."""
    copy = scratch_path(step, scratch_dir)
    if not copy.exists():
        return False
    shutil.rmtree(copy)
    return True


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", type=int)
    parser.add_argument("--reset", action="store_true", help="throw the scratch copy away")
    args = parser.parse_args()
    step = find_step(args.step)
    if args.reset:
        had_one = reset(step)
        where = shown(scratch_path(step))
        print(f"removed {where}" if had_one else f"there was no {where}")
        return 0
    copy, made = make_copy(step)
    if made:
        print(f"Copied step {step.number} to {shown(copy)}: edit the copy, never steps/{step.folder}.")
    else:
        print(f"Using your copy in {shown(copy)} (make reset-{step.number} throws it away).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
