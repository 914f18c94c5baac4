"""Every chapter has the shape guide/CONVENTIONS.md gives it: a core path a reader can
follow in its stated time, then Going deeper, the exercises and a recap; it shows a
fair share of the code its step adds, and draws the flows that are its point."""
import difflib
import re
import subprocess
import sys

import pytest

from manifest import ROOT, load_steps

CORE_PATH_LINES = 500
SHARE_SHOWN = 0.30
NOT_THE_SERVER = {"wire", "exercises", "solutions", "__pycache__", "scratch", "data"}
SECTIONS = ["## What you will build", "## Run it", "## What is on the wire", "## The code",
            "## Why it is built this way", "## Check it", "## What changed", "## Going deeper",
            "## Exercises", "## Recap"]
DIAGRAMS = {2: 3, 3: 2, 7: 1, 9: 1, 10: 1}  # where the order of messages or a flow is the point
LATER_STEPS = [step for step in load_steps() if step.number >= 2]


def python_lines(folder) -> dict[str, list[str]]:
    return {path.relative_to(folder).as_posix(): path.read_text().splitlines()
            for path in folder.rglob("*.py")
            if not NOT_THE_SERVER & set(path.relative_to(folder).parts)}


def new_lines(before: dict[str, list[str]], after: dict[str, list[str]]) -> int:
    """The non-blank lines of `after` that are added or changed against `before`."""
    count = 0
    for name, lines in after.items():
        matcher = difflib.SequenceMatcher(None, before.get(name, []), lines, autojunk=False)
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
            if tag in ("replace", "insert"):
                count += sum(1 for line in lines[j1:j2] if line.strip())
    return count


def shown_lines(text: str) -> int:
    """The non-blank lines inside the chapter's ```python blocks."""
    return sum(1 for block in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
               for line in block.splitlines() if line.strip())


def core_path(text: str) -> list[str]:
    lines = text.splitlines()
    return lines[:next((i for i, line in enumerate(lines) if line == "## Going deeper"), len(lines))]


def headings(text: str) -> list[str]:
    outside = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return [line for line in outside.splitlines() if line.startswith("## ")]


def chapter_text(step) -> str:
    return (ROOT / step.chapter).read_text()


@pytest.mark.parametrize("step", LATER_STEPS, ids=lambda step: f"ch{step.number}")
def test_the_core_path_fits_its_reading_and_the_sections_come_in_order(step):
    text = chapter_text(step)
    assert len(core_path(text)) <= CORE_PATH_LINES, (
        f"{step.chapter}: {len(core_path(text))} lines before '## Going deeper'; move the armour below it")
    found = [heading for heading in headings(text) if heading in SECTIONS]
    assert found == SECTIONS, f"{step.chapter}'s sections: {found}"
    assert headings(text)[-1] == "## Recap", f"{step.chapter} ends with {headings(text)[-1]}, not its recap"


@pytest.mark.parametrize("step", LATER_STEPS, ids=lambda step: f"ch{step.number}")
def test_the_chapter_shows_a_fair_share_of_the_code_its_step_adds(step):
    before = python_lines(ROOT / "steps" / load_steps()[step.number - 2].folder)
    added = new_lines(before, python_lines(step.path))
    shown = shown_lines(chapter_text(step))
    assert shown >= SHARE_SHOWN * added, (
        f"{step.chapter} shows {shown} lines of python, {shown / added:.0%} of the {added} its step adds")


@pytest.mark.parametrize("number, least", sorted(DIAGRAMS.items()), ids=lambda value: str(value))
def test_the_chapters_whose_point_is_an_order_or_a_flow_draw_it(number, least):
    text = chapter_text(load_steps()[number - 1])
    assert text.count("```mermaid") >= least


def test_the_measures_fail_on_a_chapter_that_breaks_them():
    long_core = "# 2. Title\n" + "words\n" * CORE_PATH_LINES + "## Going deeper\n"
    assert len(core_path(long_core)) > CORE_PATH_LINES
    assert len(core_path("# 2. Title\n## Going deeper\n" + "x\n" * 900)) == 1
    assert shown_lines("```python\nx = 1\n\ny = 2\n```\n```console\n$ z\n```\n") == 2
    assert new_lines({"a.py": ["x = 1", "y = 2"]}, {"a.py": ["x = 1", "y = 3", "", "z = 4"], "b.py": ["w"]}) == 3
    assert headings("## A\n```markdown\n## not a heading\n```\n## B\n") == ["## A", "## B"]


@pytest.mark.drift
def test_every_reading_time_line_says_what_the_chapter_takes():
    done = subprocess.run([sys.executable, str(ROOT / "guide" / "reading_time.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_reading_time_check_fails_when_a_chapter_grows(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "guide"))
    import reading_time
    chapter = tmp_path / "02-x.md"
    body = "# 2. X\n{line}\n\n" + "word " * 1500 + "\n## Going deeper\n\n" + "word " * 3000 + "\n"
    chapter.write_text(body.format(line="placeholder"))
    line = reading_time.expected_line(chapter)
    assert line.startswith("*Reading time: about 10 minutes for the core path and 20 more for Going deeper")
    chapter.write_text(body.format(line=line))
    monkeypatch.setattr(reading_time, "GUIDE", tmp_path)
    assert reading_time.main() == 0
    chapter.write_text(body.format(line=line) + "word " * 1500)
    monkeypatch.setattr(sys, "argv", ["reading_time.py", "--check"])
    assert reading_time.main() == 1
