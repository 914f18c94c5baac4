"""The manifest tells the truth: each step changes exactly the files it names.

The rules are functions that return what they find wrong, so that they run on the
repository's steps and on small broken trees made for the purpose."""
import dataclasses
from pathlib import Path

import pytest

from manifest import ROOT, Step, find_step, load_steps, shared_data

STEPS = load_steps()
PAIRS = list(zip(STEPS, STEPS[1:]))


def unnamed_files_of_the_first_step(first: Step) -> list[str]:
    return [f"{first.folder}/{name} is not in steps.toml" for name in sorted(first.files() - set(first.changes))]


def drifted_copies(before: Step, step: Step) -> list[str]:
    """Files the step does not name must be byte-identical copies of the step before."""
    problems = []
    for name in sorted(before.files() - set(step.changes) - set(step.removes)):
        copy = step.path / name
        if not copy.is_file():
            problems.append(f"{step.folder} lacks {name}: copy it, or list it under removes")
        elif copy.read_bytes() != (before.path / name).read_bytes():
            problems.append(
                f"{step.folder}/{name} differs from {before.folder}: name it in steps.toml "
                f"or carry the earlier step's version forward"
            )
    return problems


def named_but_unchanged(before: Step, step: Step) -> list[str]:
    problems = []
    for name in step.changes:
        path, old = step.path / name, before.path / name
        if not path.is_file():
            problems.append(f"steps.toml names {step.folder}/{name}, which does not exist")
        elif old.is_file() and old.read_bytes() == path.read_bytes():
            problems.append(f"{step.folder}/{name} is named as changed but equals {before.folder}'s copy")
    for name in step.removes:
        if (step.path / name).exists():
            problems.append(f"{step.folder}/{name} is listed as removed")
    return problems


def stray_files(before: Step | None, step: Step) -> list[str]:
    expected = set(step.changes)
    if before is not None:
        expected |= before.files() - set(step.removes)
    return [f"{step.folder}/{name} is not in steps.toml" for name in sorted(step.files() - expected)]


# The repository's steps

@pytest.mark.drift
def test_steps_are_numbered_in_order_with_matching_folders_and_chapters():
    assert [s.number for s in STEPS] == list(range(1, len(STEPS) + 1))
    for step in STEPS:
        assert step.folder.startswith(f"{step.number:02d}-")
        assert step.path.is_dir(), f"{step.folder} is missing"
        assert step.server.is_file(), f"{step.folder} has no server.py"
        assert (ROOT / step.chapter).is_file(), f"{step.chapter} is missing"


@pytest.mark.drift
def test_first_step_names_every_file_it_has():
    assert unnamed_files_of_the_first_step(STEPS[0]) == []


@pytest.mark.drift
@pytest.mark.parametrize("before,step", PAIRS, ids=lambda s: s.folder)
def test_unnamed_files_are_byte_identical_copies(before, step):
    assert drifted_copies(before, step) == []


@pytest.mark.drift
@pytest.mark.parametrize("before,step", PAIRS, ids=lambda s: s.folder)
def test_named_files_are_new_or_changed(before, step):
    assert named_but_unchanged(before, step) == []


@pytest.mark.drift
@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.folder)
def test_no_stray_files(step):
    before = STEPS[step.number - 2] if step.number > 1 else None
    assert stray_files(before, step) == []


def copies_of_shared_data(steps: list[Step], shared: list[str]) -> list[str]:
    """A file the steps share is kept once, in the shared folder, never in a step."""
    return [f"{step.folder}/{name} copies a shared data file" for step in steps
            for name in sorted(step.files()) if Path(name).name in shared]


@pytest.mark.drift
def test_shared_data_is_kept_once_with_where_it_comes_from():
    folder, files, origin = shared_data()
    assert [name for name in files + origin if not (folder / name).is_file()] == []
    assert copies_of_shared_data(STEPS, files) == []


# The rules find what they are for, in two small steps made for each test

@pytest.fixture
def two_steps(tmp_path):
    """01-a with two files; 02-b changes one of them and copies the other."""
    first, second = tmp_path / "01-a", tmp_path / "02-b"
    for folder in (first, second):
        folder.mkdir()
        (folder / "tools.py").write_text("TOOLS = []\n")
    (first / "server.py").write_text("print(1)\n")
    (second / "server.py").write_text("print(2)\n")
    before = Step(1, str(first), "A", "guide/01-a.md", changes=["server.py", "tools.py"])
    step = Step(2, str(second), "B", "guide/02-b.md", changes=["server.py"])
    return before, step


def test_a_clean_pair_of_steps_breaks_no_rule(two_steps):
    before, step = two_steps
    assert unnamed_files_of_the_first_step(before) == []
    assert drifted_copies(before, step) == named_but_unchanged(before, step) == []
    assert stray_files(None, before) == stray_files(before, step) == []


def test_a_copy_that_drifted_is_reported(two_steps):
    before, step = two_steps
    (step.path / "tools.py").write_text("TOOLS = ['fixed only here']\n")
    assert drifted_copies(before, step) == [
        f"{step.folder}/tools.py differs from {before.folder}: name it in steps.toml "
        f"or carry the earlier step's version forward"
    ]


def test_a_copy_that_went_missing_is_reported(two_steps):
    before, step = two_steps
    (step.path / "tools.py").unlink()
    assert drifted_copies(before, step) == [f"{step.folder} lacks tools.py: copy it, or list it under removes"]


def test_a_listed_removal_is_not_a_missing_copy(two_steps):
    before, step = two_steps
    (step.path / "tools.py").unlink()
    step = dataclasses.replace(step, removes=["tools.py"])
    assert drifted_copies(before, step) == named_but_unchanged(before, step) == []


def test_a_changed_file_the_manifest_does_not_name_is_reported(two_steps):
    before, step = two_steps
    step = dataclasses.replace(step, changes=[])  # server.py differs, but is not named
    assert drifted_copies(before, step) == [
        f"{step.folder}/server.py differs from {before.folder}: name it in steps.toml "
        f"or carry the earlier step's version forward"
    ]


def test_a_named_file_that_did_not_change_is_reported(two_steps):
    before, step = two_steps
    step = dataclasses.replace(step, changes=["server.py", "tools.py"])
    assert named_but_unchanged(before, step) == [
        f"{step.folder}/tools.py is named as changed but equals {before.folder}'s copy"
    ]


def test_a_named_file_that_does_not_exist_is_reported(two_steps):
    before, step = two_steps
    step = dataclasses.replace(step, changes=["server.py", "client.py"])
    assert named_but_unchanged(before, step) == [f"steps.toml names {step.folder}/client.py, which does not exist"]


def test_a_removed_file_that_is_still_there_is_reported(two_steps):
    before, step = two_steps
    step = dataclasses.replace(step, removes=["tools.py"])
    assert named_but_unchanged(before, step) == [f"{step.folder}/tools.py is listed as removed"]


def test_a_stray_file_is_reported(two_steps):
    before, step = two_steps
    (step.path / "notes.txt").write_text("scratch\n")
    assert stray_files(before, step) == [f"{step.folder}/notes.txt is not in steps.toml"]


def test_a_file_the_first_step_does_not_name_is_reported(two_steps):
    before, _step = two_steps
    (before.path / "wire").mkdir()
    (before.path / "wire" / "01-x.sh").write_text("post\n")
    assert unnamed_files_of_the_first_step(before) == [f"{before.folder}/wire/01-x.sh is not in steps.toml"]
    assert stray_files(None, before) == [f"{before.folder}/wire/01-x.sh is not in steps.toml"]


def test_caches_are_not_snapshot_files(two_steps):
    before, _step = two_steps
    (before.path / "__pycache__").mkdir()
    (before.path / "__pycache__" / "server.cpython-311.pyc").write_bytes(b"\0")
    assert before.files() == {"server.py", "tools.py"}


def test_an_unknown_step_number_is_refused_with_a_message():
    with pytest.raises(SystemExit, match="There is no step 99 in steps/steps.toml"):
        find_step(99)



def test_a_copy_of_shared_data_in_a_step_is_reported(two_steps):
    before, step = two_steps
    (step.path / "minilm-vocab.txt").write_text("[UNK]\n")
    assert copies_of_shared_data([before, step], ["minilm-vocab.txt"]) == [
        f"{step.folder}/minilm-vocab.txt copies a shared data file"
    ]
