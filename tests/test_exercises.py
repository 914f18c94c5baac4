"""Every exercise can be done: its check fails on the step as it is, its worked
solution still applies to the step, and the check passes once it has."""
import re
import subprocess
import sys

import pytest

from manifest import ROOT, find_step, load_steps
from scratch_copy import make_copy, reset, scratch_path

sys.path.insert(0, str(ROOT / "guide" / "exercises"))
from patch import apply, parse  # noqa: E402
from run import all_exercises, check, record, solve  # noqa: E402

EXERCISES = all_exercises()


@pytest.mark.slow
@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_the_check_fails_before_the_solution_and_passes_after_it(exercise, tmp_path, capsys):
    copy, _made = make_copy(exercise.step, tmp_path)
    assert check(exercise, copy) is False, f"exercise {exercise.id}'s check passes on the unchanged step"
    before = capsys.readouterr().out
    assert "  MISSING  " in before, f"the check should say what is missing, not break:\n{before}"
    apply(parse(exercise.solution.read_text()), copy)  # PatchError: the solution no longer fits the step
    assert check(exercise, copy) is True, capsys.readouterr().out


@pytest.mark.parametrize("exercise", EXERCISES[:1] + EXERCISES[4:5], ids=lambda e: e.id)
def test_a_recorded_solution_rebuilds_the_solved_copy(exercise, tmp_path):
    solved, _made = make_copy(exercise.step, tmp_path / "solved")
    apply(parse(exercise.solution.read_text()), solved)
    fresh, _made = make_copy(exercise.step, tmp_path / "fresh")
    apply(parse(record(exercise, solved)), fresh)
    for path in solved.rglob("*"):
        if path.is_file():
            assert (fresh / path.relative_to(solved)).read_text() == path.read_text()


def test_every_chapter_has_exercises_and_every_exercise_has_its_parts():
    with_exercises = {exercise.step.number for exercise in EXERCISES}
    for step in load_steps():
        assert step.number in with_exercises, (
            f"chapter {step.number} has no exercises: add them under guide/exercises/{step.folder}/ "
            f"as guide/CONVENTIONS.md describes"
        )
    for exercise in EXERCISES:
        parts = sorted(p.name for p in exercise.path.iterdir() if p.name != "__pycache__")
        assert parts in (["check.py", "solution.diff"], ["check.py", "solution.diff", "solution.md"]), (
            f"{exercise.path} holds {parts}")
        assert re.fullmatch(r"\d+-[a-z0-9]+(-[a-z0-9]+)*", exercise.path.name), exercise.path.name
    for step in load_steps():
        numbers = [e.number for e in EXERCISES if e.step == step]
        assert numbers == list(range(1, len(numbers) + 1)), f"step {step.number}'s exercises are numbered {numbers}"


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_the_chapter_says_where_the_exercise_goes_and_how_to_check_it(exercise):
    section = (ROOT / exercise.step.chapter).read_text().partition("\n## Exercises\n")[2]
    assert section, f"{exercise.step.chapter} has no Exercises section"
    relative = exercise.solution.relative_to(ROOT / "guide").as_posix()
    assert f"({relative})" in section, f"{exercise.step.chapter} does not link {relative}"
    assert f"make exercise-{exercise.id}" in section


def exercise_item(exercise) -> str:
    """The exercise's own item in its chapter's numbered list, from its number to the next."""
    section = (ROOT / exercise.step.chapter).read_text().partition("\n## Exercises\n")[2].partition("\n## ")[0]
    items = re.split(r"(?m)^(?=\d+\. \*\*)", section)[1:]
    return items[exercise.number - 1]


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_an_exercise_that_asks_a_question_has_its_answer_beside_the_diff(exercise):
    item = exercise_item(exercise)
    assert f"make exercise-{exercise.id}" in item, f"item {exercise.number} of {exercise.step.chapter} is another exercise's"
    answers = exercise.path / "solution.md"
    if "?" in item.partition("Check:")[0]:
        assert answers.exists(), f"exercise {exercise.id} asks a question: answer it in {answers.relative_to(ROOT)}"
    if answers.exists():
        assert f"({answers.relative_to(ROOT / 'guide').as_posix()})" in item, (
            f"{exercise.step.chapter} does not link {answers.relative_to(ROOT)} from exercise {exercise.number}")
        text = answers.read_text()
        assert text.startswith("# ") and len(text.split()) >= 60, f"{answers.relative_to(ROOT)} answers in too few words"


UNRESOLVED_LINK = '{"path": r.source, "line": r.link.line, "target": r.link.target}'


@pytest.mark.parametrize("mistake, named", [
    ('{"path": r.source, "target": r.link.target}', "'line' is missing from a link"),
    ('{"path": r.source, "line": str(r.link.line), "target": r.link.target}', 'on lines ["12", "12"]'),
    ('{"path": r.source, "line": r.link.line, "target": r.link.target.lower()}', "Ask the link graph"),
], ids=["no-line", "line-as-text", "wrong-targets"])
def test_exercise_8_1s_check_names_the_first_real_difference(tmp_path, capsys, mistake, named):
    exercise = next(exercise for exercise in EXERCISES if exercise.id == "8.1")
    copy, _made = make_copy(exercise.step, tmp_path)
    apply(parse(exercise.solution.read_text()), copy)
    tools = copy / "tools.py"
    assert UNRESOLVED_LINK in tools.read_text()
    tools.write_text(tools.read_text().replace(UNRESOLVED_LINK, mistake))
    assert check(exercise, copy) is False
    missing = [line for line in capsys.readouterr().out.splitlines() if "  MISSING  " in line]
    assert len(missing) == 1 and named in missing[0], missing


def test_solve_applies_the_solution_and_refuses_a_second_time(tmp_path, capsys):
    exercise = EXERCISES[0]
    copy, _made = make_copy(exercise.step, tmp_path)
    assert solve(exercise, copy) is True
    assert solve(exercise, copy) is False
    printed = capsys.readouterr().out
    assert "does not apply" in printed and f"make reset-{exercise.step.number}" in printed


def test_scratch_copies_hold_the_whole_step_and_survive_until_reset(tmp_path):
    step = load_steps()[0]
    copy, made = make_copy(step, tmp_path)
    assert made and copy == scratch_path(step, tmp_path)
    assert {p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()} == step.files()
    (copy / "server.py").write_text("# the reader's work\n")
    assert make_copy(step, tmp_path) == (copy, False)
    assert (copy / "server.py").read_text() == "# the reader's work\n"
    assert reset(step, tmp_path) is True and not copy.exists()
    assert reset(step, tmp_path) is False


def test_the_scratch_folder_is_ignored_by_git_and_lies_outside_every_step():
    step = load_steps()[0]
    ignored = subprocess.run(["git", "check-ignore", "-q", str(scratch_path(step) / "server.py")], cwd=ROOT)
    assert ignored.returncode == 0, "steps/scratch/ is not in .gitignore"
    for each in load_steps():  # so Step.files() and the snapshot rules never see a copy
        assert not scratch_path(each).is_relative_to(each.path)


def test_the_runner_says_when_there_is_no_copy_to_check(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "guide" / "exercises" / "run.py"), "1.1", "--folder",
                           str(tmp_path / "nothing")], capture_output=True, text=True)
    assert done.returncode == 1 and "make try-1" in done.stdout


def test_make_wires_the_reader_commands():
    done = subprocess.run(["make", "-n", "try-2", "reset-2", "exercise-2.1", "solve-2.1"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "steps/scratch_copy.py 2" in done.stdout
    assert "steps/scratch/02-protocol-and-sessions/server.py --port 3000" in done.stdout
    assert "steps/scratch_copy.py 2 --reset" in done.stdout
    assert "guide/exercises/run.py 2.1" in done.stdout and "guide/exercises/run.py 2.1 --solve" in done.stdout


def test_a_scratch_copy_finds_the_shared_embedding_table_beside_it(tmp_path):
    copy, _made = make_copy(find_step(6), tmp_path)
    done = subprocess.run([sys.executable, "embeddings.py", "--embedder", "static", "--query", "rye"],
                          cwd=copy, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "offline static table" in done.stdout
    assert (tmp_path / "data" / "minilm-static.bin").is_file()
