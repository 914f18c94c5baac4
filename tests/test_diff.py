"""make diff-N tells the story of a step: the map first, then the changes in order."""
import dataclasses
import io
import os
import re
import sys

import pytest

import diff
import moves
import pager
from definitions import MARKER, pieces
from manifest import Step, load_steps

STEPS = load_steps()


def test_the_story_comes_before_any_change():
    lines = diff.step_diff(2)
    first_change = next(i for i, line in enumerate(lines) if line.startswith("+++ "))
    story = "".join(lines[:first_change])
    assert lines[0] == "Step 2: The protocol done properly (guide/02-protocol-and-sessions.md)\n"
    assert "The one file of step 1 is split by what each part knows." in " ".join(story.split())
    assert "Where step 1's code went:\n" in story
    handle = r"server\.py:handle +->  protocol\.py:Server\.handle\n +->  protocol\.py:Server\.on_request\n"
    assert re.search(handle, story)
    # A class takes its methods along by name, unless one has a move of its own.
    assert re.search(r"server\.py:Handler\.send_json +->  http_transport\.py:McpHandler\.send_json\n", story)
    assert re.search(r"server\.py:Handler\.do_POST +->  http_transport\.py:McpHandler\.post\n", story)
    assert "McpHandler.do_POST" in story.partition("New definitions:")[2]


def test_a_moved_definition_is_compared_with_what_it_was():
    text = "".join(diff.step_diff(2))
    moved = "--- 01-raw-dispatcher/server.py:handle\n+++ 02-protocol-and-sessions/protocol.py:Server.on_request\n"
    assert moved in text
    # The moved lines are not shown a second time as removed from server.py.
    assert "--- 01-raw-dispatcher/server.py:handle\n+++ /dev/null" not in text


def test_moved_unchanged_and_gone_definitions_are_each_said_once(tmp_path):
    old, new = tmp_path / "01-old", tmp_path / "02-new"
    old.mkdir(), new.mkdir()
    (old / "a.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n\n\ndef h():\n    pass\n")
    (new / "a.py").write_text("def g():\n    return 3\n")
    (new / "b.py").write_text("def f():\n    return 1\n")
    before = Step(1, str(old), "Old", "old.md", ["a.py"])
    step = Step(2, str(new), "New", "new.md", ["b.py", "a.py"], moves=[{"from": "a.py:f", "to": ["b.py:f"]}])
    found = moves.plan(step, before)
    text = "".join(diff.code_changes("b.py", step, before, found) + diff.code_changes("a.py", step, before, found))
    assert f"= {new}/b.py:f is {old}/a.py:f, unchanged\n" in text
    assert f"--- {old}/a.py:g\n+++ {new}/a.py:g\n@@ -5,2 +1,2 @@\n def g():\n-    return 2\n+    return 3\n" in text
    assert f"--- {old}/a.py:h\n+++ /dev/null\n@@ -9,2 +0,0 @@\n-def h():\n-    pass\n" in text
    assert text.count("def f():") == 0 and found.gone() == [("a.py", "h")]


def test_hunk_line_numbers_point_into_the_files():
    lines = diff.step_diff(2)
    at = lines.index("+++ 02-protocol-and-sessions/protocol.py:Server.on_request\n") + 1
    match = re.match(r"@@ -(\d+),\d+ \+(\d+),\d+ @@", lines[at])
    old_line, new_line = int(match[1]), int(match[2])
    assert (STEPS[0].server.read_text().splitlines()[old_line - 1]) == "def handle(message):"
    protocol = (STEPS[1].path / "protocol.py").read_text().splitlines()
    assert protocol[new_line - 1].strip().startswith("def on_request(")


def test_files_come_in_the_order_steps_toml_lists_them_and_transcripts_last():
    for step in STEPS:
        lines = diff.step_diff(step.number)
        banners = [line.split(":")[0].removeprefix("=== ") for line in lines if line.startswith("=== ")]
        assert banners == [name for name in step.changes if name.endswith(".py")]
        kinds = [line.endswith(".out (--all shows it)\n") for line in lines if " transcript: " in line or
                 line.startswith("+++ ")]
        assert kinds == sorted(kinds), "a transcript is listed before code or a wire script"


def test_a_file_without_moves_is_one_diff_with_definitions_named_at_each_hunk():
    lines = diff.step_diff(3)
    at = lines.index("--- 02-protocol-and-sessions/protocol.py\n")
    assert lines[at + 1] == "+++ 03-stdio-and-stateless/protocol.py\n"
    hunks = [line for line in lines[at:] if line.startswith("@@")]
    assert any(line.rstrip().endswith(" is_stateless") for line in hunks)
    assert "http_transport.py  McpHandler.check_protocol_version" in "".join(lines[:at])  # under Gone:


def test_transcripts_are_named_unless_all_and_removals_are_listed():
    lines = diff.step_diff(2)
    assert "changed transcript: 02-protocol-and-sessions/wire/01-initialize.out (--all shows it)\n" in lines
    assert "new transcript: 02-protocol-and-sessions/wire/02-too-early.out (--all shows it)\n" in lines
    assert "removed wire/08-broken-body.sh\n" in lines
    full = diff.step_diff(2, transcripts=True)
    assert not any(" transcript: " in line for line in full)
    assert any(line.startswith("+++ 02-protocol-and-sessions/wire/01-initialize.out") for line in full)


@pytest.mark.parametrize("step", STEPS[1:], ids=lambda s: s.folder)
def test_every_move_in_steps_toml_names_definitions_that_exist(step):
    assert moves.plan(step, STEPS[step.number - 2]).problems == []


def test_a_move_to_or_from_nothing_is_reported():
    step = dataclasses.replace(STEPS[1], moves=[{"from": "server.py:nothing", "to": ["protocol.py:Nowhere"]}])
    problems = moves.plan(step, STEPS[0]).problems
    assert problems == [
        "steps.toml: step 2 moves server.py:nothing, which the step before lacks",
        "steps.toml: step 2 moves to protocol.py:Nowhere, which it lacks",
    ]


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_colour_through_the_pager(tmp_path, monkeypatch):
    received = tmp_path / "paged"
    monkeypatch.setenv("PAGER", f"{sys.executable} -c \"import sys; open('{received}', 'w').write(sys.stdin.read())\"")
    out = Terminal()
    pager.show(["+added\n", "-removed\n", "plain\n"], out)
    assert out.getvalue() == ""
    assert received.read_text() == "\033[32m+added\033[0m\n\033[31m-removed\033[0m\nplain\n"


def test_without_a_pager_a_terminal_gets_colour_directly(monkeypatch):
    monkeypatch.setenv("PAGER", "no-such-pager-anywhere")
    out = Terminal()
    pager.show(["+added\n"], out)
    assert out.getvalue() == "\033[32m+added\033[0m\n"


def test_a_pipe_gets_plain_text_and_no_pager(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGER", f"touch {tmp_path / 'ran'}")
    out = io.StringIO()
    pager.show(["+added\n", "last"], out)
    assert out.getvalue() == "+added\nlast\n\\ No newline at end of file\n"
    assert not (tmp_path / "ran").exists()


SAMPLE = '''\
"""Doc."""
import os

import sys

# What LIMIT is for.
LIMIT = 3


# region thing
@decorate
class Thing:
    """A thing."""

    size = 1

    def grow(self):
        return 2
        # a comment at the end of grow
# endregion thing


def main():
    pass
'''


def test_a_file_is_cut_into_named_pieces_with_their_comments():
    found = {piece.name: piece for piece in pieces(SAMPLE)}
    assert list(found) == ["(docstring)", "(imports)", "LIMIT", "Thing", "Thing.size", "Thing.grow", "main"]
    assert found["(imports)"].lines == ["import os", "", "import sys"]
    assert found["LIMIT"].lines == ["# What LIMIT is for.", "LIMIT = 3"]
    assert found["Thing"].lines == ["@decorate", "class Thing:", '    """A thing."""']
    assert found["Thing.grow"].lines[-1] == "        # a comment at the end of grow"
    assert found["Thing.grow"].start == 17
    assert [p.name for p in found.values() if p.is_definition] == ["Thing", "Thing.grow", "main"]


@pytest.mark.parametrize("path", sorted({p for s in STEPS for p in s.path.glob("*.py")}), ids=lambda p: p.name)
def test_every_line_of_every_step_file_is_in_exactly_one_piece(path):
    lines, seen = path.read_text().splitlines(), []
    for piece in pieces(path.read_text()):
        assert piece.lines == lines[piece.start - 1:piece.start - 1 + len(piece.lines)]
        seen += range(piece.start, piece.start + len(piece.lines))
    assert len(seen) == len(set(seen))
    left_out = [n for n, line in enumerate(lines, 1) if n not in seen and line.strip() and not MARKER.match(line)]
    assert left_out == []

