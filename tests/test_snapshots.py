"""The manifest tells the truth: each step changes exactly the files it names."""
import pytest

from manifest import ROOT, load_steps

STEPS = load_steps()
PAIRS = list(zip(STEPS, STEPS[1:]))


def test_steps_are_numbered_in_order_with_matching_folders_and_chapters():
    assert [s.number for s in STEPS] == list(range(1, len(STEPS) + 1))
    for step in STEPS:
        assert step.folder.startswith(f"{step.number:02d}-")
        assert step.path.is_dir(), f"{step.folder} is missing"
        assert step.server.is_file(), f"{step.folder} has no server.py"
        assert (ROOT / step.chapter).is_file(), f"{step.chapter} is missing"


def test_first_step_names_every_file_it_has():
    first = STEPS[0]
    assert first.files() == set(first.changes)


@pytest.mark.parametrize("before,step", PAIRS, ids=lambda s: s.folder)
def test_unnamed_files_are_byte_identical_copies(before, step):
    for name in before.files() - set(step.changes) - set(step.removes):
        copy = step.path / name
        assert copy.is_file(), f"{step.folder} lacks {name}: copy it, or list it under removes"
        assert copy.read_bytes() == (before.path / name).read_bytes(), (
            f"{step.folder}/{name} differs from {before.folder}: name it in steps.toml "
            f"or carry the earlier step's version forward"
        )


@pytest.mark.parametrize("before,step", PAIRS, ids=lambda s: s.folder)
def test_named_files_are_new_or_changed(before, step):
    for name in step.changes:
        path = step.path / name
        assert path.is_file(), f"steps.toml names {step.folder}/{name}, which does not exist"
        old = before.path / name
        assert not old.is_file() or old.read_bytes() != path.read_bytes(), (
            f"{step.folder}/{name} is named as changed but equals {before.folder}'s copy"
        )
    for name in step.removes:
        assert not (step.path / name).exists(), f"{step.folder}/{name} is listed as removed"


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.folder)
def test_no_stray_files(step):
    expected = set(step.changes)
    if step.number > 1:
        before = STEPS[step.number - 2]
        expected |= before.files() - set(step.removes)
    assert step.files() <= expected, f"files not in steps.toml: {sorted(step.files() - expected)}"

