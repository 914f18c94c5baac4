#!/usr/bin/env python3
"""Throw the practice vaults away, with their search indexes (make reset-vault).

Each step that reads a vault serves its own copy of the sample vault when given no
--vault: steps/scratch/vaults/NN-name (see its scratch_vault.py). A chapter's scripts
write into that copy, so running them a second time, or after your own experiments,
can answer differently from the chapter. After this, the next start of each step makes
a fresh copy and builds its index anew, as the chapters show. Your own vault (VAULT=)
and your scratch copies of the steps (make try-N) are left alone.
"""
import shutil
import sys
from pathlib import Path

from manifest import STEPS_DIR, load_steps

VAULTS_DIR = STEPS_DIR / "scratch" / "vaults"


def index_folder(vault: Path) -> Path:
    """Where the newest step keeps the index of `vault` in the user's cache; steps 7-9
    name it the same way."""
    sys.path.insert(0, str(load_steps()[-1].path))
    from index import default_index_dir
    return default_index_dir(vault)


def reset_vaults(vaults_dir: Path = VAULTS_DIR) -> list[str]:
    """Remove every practice vault and its index; the names of the vaults removed."""
    if not vaults_dir.is_dir():
        return []
    removed = []
    for vault in sorted(path for path in vaults_dir.iterdir() if path.is_dir()):
        shutil.rmtree(index_folder(vault), ignore_errors=True)
        shutil.rmtree(vault)
        removed.append(vault.name)
    return removed


def main() -> int:
    removed = reset_vaults()
    if removed:
        print(f"removed the practice vaults of {', '.join(removed)} and their indexes;"
              " each step copies the sample vault again when it next starts")
    else:
        print(f"there were no practice vaults in {VAULTS_DIR.relative_to(STEPS_DIR.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
