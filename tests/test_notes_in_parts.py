"""get_note reads a long note in parts (step 4 on), over real HTTP on a temporary vault:
each part at most maxChars characters, with truncated, nextOffset and (step 5 on) the
outline; the parts add up to the text exactly; no part cuts a CR LF, an emoji, an
accent or a joiner from what it belongs to; an offset past the end is refused. Run on
each step whose get_note reads the text another way: as the file has it (4), parsed,
its line ends "\n" (5), with embeds quoted (8), and the last (10)."""
import unicodedata

import pytest

from helpers import step_modules, tool_data, tool_refusal, tool_session
from launch import running_server
from manifest import find_step

STEPS = [4, 5, 8, 10]
PARSED_SINCE, EMBEDS_SINCE = 5, 8
# Lines of about 75 characters, with what a careless cut would break: emoji outside the
# BMP, a family joined by U+200D, decomposed accents, a flag.
LINE = "Crumb {n:06d}: 🍞 open and glossy, 👨\u200d👩\u200d👧 ate it, cafe\u0301 au lait, 🇫🇷 flour.\n"
LONG = "# Bake diary\n\n" + "".join(LINE.format(n=n) for n in range(4200)) + "## Last\n\nThe end.\n"
# One line, no line end to cut after: the cut falls wherever maxChars says, and must move.
NO_BREAKS = "x" * 99 + "e\u0301" + "👨\u200d👩\u200d👧" * 30 + "\r\n" * 40


@pytest.fixture(scope="module", params=STEPS, ids=lambda number: f"step{number}")
def step(request):
    return request.param


def as_read(text: str, step: int) -> str:
    """The text get_note answers with: from step 5 on, parse_note makes every line end "\n"."""
    return text.replace("\r\n", "\n") if step >= PARSED_SINCE else text


@pytest.fixture(scope="module")
def server(tmp_path_factory, step):
    vault = tmp_path_factory.mktemp("parts") / "vault"
    vault.mkdir()
    (vault / "Diary.md").write_text(LONG, encoding="utf-8", newline="")
    (vault / "Crlf.md").write_text(LONG.replace("\n", "\r\n"), encoding="utf-8", newline="")
    (vault / "Knots.md").write_text(NO_BREAKS, encoding="utf-8", newline="")
    found = find_step(step)
    with running_server(found.server, "--vault", str(vault), timeout=30) as (url, _log):
        yield tool_session(url, found.path)


def read_all(server, path: str, **arguments) -> list[dict]:
    parts, offset = [], 0
    while True:
        part = tool_data(server, "get_note", path=path, offset=offset, **arguments)
        parts.append(part)
        if not part.get("truncated"):
            return parts
        assert part["nextOffset"] > offset  # every part moves on
        offset = part["nextOffset"]


def test_a_300_kb_note_read_in_parts_adds_up_to_the_note(server, step):
    assert len(LONG.encode("utf-8")) > 300_000
    parts = read_all(server, "Diary.md")
    assert len(parts) > 1
    assert "".join(part["text"] for part in parts) == LONG
    for part in parts:
        assert len(part["text"]) <= 40_000  # the default maxChars
        assert part["totalChars"] == len(LONG)
        if step >= PARSED_SINCE:
            assert [h["heading"] for h in part["outline"]] == ["Bake diary", "Last"]  # to go by section instead
    assert all(part["text"].endswith("\n") for part in parts)  # each part ends where a line does


def test_a_crlf_note_adds_up_to_its_text(server, step):
    """The text a note is read as (from step 5 on, its line ends "\\n"): parts of it add up to it."""
    text = as_read(LONG.replace("\n", "\r\n"), step)
    whole = tool_data(server, "get_note", path="Crlf.md", maxChars=1_000_000)
    assert "truncated" not in whole and whole["text"] == text
    parts = read_all(server, "Crlf.md", maxChars=7_000)
    assert "".join(part["text"] for part in parts) == text
    assert not any(part["text"].startswith("\n") for part in parts)  # never the \n of a CR LF


def test_no_part_begins_with_half_of_a_character(server, step):
    parts = read_all(server, "Knots.md", maxChars=100, **({"embeds": False} if step >= EMBEDS_SINCE else {}))
    text = "".join(part["text"] for part in parts)
    assert text == as_read(NO_BREAKS, step)
    for part in parts[1:]:
        first = part["text"][0]
        assert not unicodedata.category(first).startswith("M"), part["text"][:5]
        assert first not in "\u200d\ufe0f" and part["text"][:1] != "\U0001f467", part["text"][:5]


def test_the_parts_of_a_crlf_never_split(server, step):
    with step_modules(find_step(step).path):
        from long_notes import cut_point
    text = "a" * 10 + "\r\n" + "b" * 10
    assert cut_point(text, 0, 11) == 10  # between \r and \n: moved back before the \r
    assert cut_point("ab\u0301c", 0, 2) == 1  # before an accent: moved back to its letter


def test_a_short_note_is_whole_and_says_nothing_of_parts(server, step):
    answer = tool_data(server, "get_note", path="Knots.md")
    assert answer["text"] == as_read(NO_BREAKS, step)
    assert not {"truncated", "nextOffset", "totalChars"} & set(answer)


def test_an_offset_past_the_end_is_refused_and_one_at_the_end_is_empty(server):
    assert "offset 999999 is past the end of Diary.md's text" in tool_refusal(server, "get_note", path="Diary.md",
                                                                             offset=999_999)
    assert "is past the end" in tool_refusal(server, "get_note", path="Diary.md", offset=len(LONG) + 1)
    end = tool_data(server, "get_note", path="Diary.md", offset=len(LONG))
    assert end["text"] == "" and "truncated" not in end
    assert "maxChars: must be an integer (100 to 1000000)" in tool_refusal(server, "get_note", path="Diary.md",
                                                                           maxChars=5)
    assert "offset: must be an integer (at least 0)" in tool_refusal(server, "get_note", path="Diary.md", offset=-1)
