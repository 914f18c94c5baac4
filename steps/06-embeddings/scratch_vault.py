"""The vault a server opens when it is given no --vault: its step's copy of the sample vault.

The sample vault, steps/sample-vault, belongs to the repository: git tracks it, and a
server must never write into it (from step 8, create_note adds a note). So without
--vault a step serves its own practice vault, steps/scratch/vaults/NN-name, a copy made
from the sample the first time it is missing. One copy per step keeps each chapter's
transcripts true: what chapter 8's scripts create never shows in chapter 9's answers.
git ignores steps/scratch/; make reset-vault throws every copy away. make step-N, make
demo-N, a client that starts the server, a server started by hand, and the reader's
copy of the step (make try-N) all come here.
"""
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

DEFAULT_VAULT = "steps/scratch/vaults/NN-name"  # as --help and the error messages name it


def scratch_vault() -> Path:
    """steps/scratch/vaults/NN-name, copied from steps/sample-vault when it is not there."""
    steps = steps_folder(Path(__file__))
    step = Path(__file__).resolve().parent.name  # the reader's copy of a step (make try-N) has the same name
    copy = steps / "scratch" / "vaults" / step
    if not copy.is_dir():
        copy_whole(steps / "sample-vault", copy)
    return copy


def steps_folder(start: Path) -> Path:
    """The repository's steps/ folder: the nearest one above `start` that holds steps.toml.
    A step lives in steps/NN-name/, and a reader's copy of one in steps/scratch/NN-name/."""
    for folder in start.resolve().parents:
        if (folder / "steps.toml").is_file():
            return folder
    raise FileNotFoundError(f"there is no steps/steps.toml above {start.parent}, so no sample vault to copy")


def copy_whole(sample: Path, copy: Path) -> None:
    """Copy into a temporary folder beside `copy`, then rename it: two servers started
    at once (two clients, say) each find a whole copy, never half of one."""
    copy.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=".sample-vault-", dir=copy.parent))
    try:
        shutil.copytree(sample, temporary, dirs_exist_ok=True)
        pin_times(temporary)
        os.rename(temporary, copy)  # refused when another server's copy got there first
    except OSError:
        if not copy.is_dir():
            raise
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


PINNED_AT = 1_775_034_000  # 2026-04-01T09:00:00Z


def pin_times(vault: Path) -> None:
    """Give every file of a fresh copy a modification time of its own, the same on every
    machine (a clone's times are the day it was cloned): list_notes shows them, and the
    chapter's transcripts show these. Each is a minute of the week from PINNED_AT that
    its path's hash picks; steps/check.py gives its copies the same."""
    for file in vault.rglob("*"):
        if file.is_file():
            digest = hashlib.sha256(file.relative_to(vault).as_posix().encode()).digest()
            moment = PINNED_AT + 60 * (int.from_bytes(digest[:4], "big") % (7 * 24 * 60))
            os.utime(file, (moment, moment))
