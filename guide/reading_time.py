"""How long a chapter takes to read, and whether its reading-time line says so.

    python3 guide/reading_time.py            print the figures for every chapter
    python3 guide/reading_time.py --check    exit 1 when a chapter's line says otherwise

The rates come from a timed read of the whole guide by a reader new to it, who ran
every step and one exercise a chapter: that read took about a third longer than 200
words a minute of prose and 100 of code and transcripts had promised. So prose counts
at 150 words a minute and the words inside fenced blocks at 75, an exercise at 15
minutes. Include markers are not words anyone reads.
"""
import re
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parent
PROSE_WORDS_A_MINUTE = 150
BLOCK_WORDS_A_MINUTE = 75
MINUTES_AN_EXERCISE = 15
DEEPER = re.compile(r"^## Going deeper\b")
EXERCISE = re.compile(r"^\d+\. \*\*")


def minutes(lines: list[str]) -> float:
    prose = block = 0
    inside = False
    for line in lines:
        if line.startswith("```"):
            inside = not inside
            continue
        if line.startswith("<!--"):
            continue
        if inside:
            block += len(line.split())
        else:
            prose += len(line.split())
    return prose / PROSE_WORDS_A_MINUTE + block / BLOCK_WORDS_A_MINUTE


def exercises(lines: list[str]) -> int:
    start = next((i for i, line in enumerate(lines) if line == "## Exercises"), len(lines))
    end = next((i for i, line in enumerate(lines[start + 1:], start + 1) if line.startswith("## ")), len(lines))
    return sum(1 for line in lines[start:end] if EXERCISE.match(line))


def to_five(value: float) -> int:
    return max(5, 5 * round(value / 5))


def in_words(total: int) -> str:
    """75 -> 'an hour and a quarter', rounded to a quarter of an hour."""
    quarters = max(1, round(total / 15))
    hours, rest = divmod(quarters, 4)
    parts = {0: "", 1: " and a quarter", 2: " and a half", 3: " and three quarters"}
    if hours == 0:
        return {1: "a quarter of an hour", 2: "half an hour", 3: "three quarters of an hour"}[rest]
    return ("an hour" if hours == 1 else f"{hours} hours") + parts[rest]


def expected_line(chapter: Path) -> str:
    lines = chapter.read_text(encoding="utf-8").splitlines()
    cut = next((i for i, line in enumerate(lines) if DEEPER.match(line)), len(lines))
    core, deeper = to_five(minutes(lines[:cut])), minutes(lines[cut:])
    total = core + to_five(deeper) + MINUTES_AN_EXERCISE * exercises(lines)
    if cut == len(lines):
        return f"*Reading time: about {core} minutes; with the exercises, about {in_words(total)}.*"
    return (f"*Reading time: about {core} minutes for the core path and {to_five(deeper)} more for "
            f"Going deeper; with the exercises, about {in_words(total)}.*")


def main() -> int:
    check = "--check" in sys.argv[1:]
    wrong = 0
    for chapter in sorted(GUIDE.glob("[0-9][0-9]-*.md")):
        line, said = expected_line(chapter), chapter.read_text(encoding="utf-8").splitlines()[1]
        if said != line:
            wrong += 1
            print(f"{chapter.name}: says  {said}\n{' ' * len(chapter.name)}  count {line}")
        elif not check:
            print(f"{chapter.name}: {line}")
    return 1 if check and wrong else 0


if __name__ == "__main__":
    sys.exit(main())
