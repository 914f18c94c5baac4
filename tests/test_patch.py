"""guide/exercises/patch.py applies a unified diff exactly, or not at all."""
import sys

import pytest

from manifest import ROOT

sys.path.insert(0, str(ROOT / "guide" / "exercises"))
from patch import PatchError, apply, parse  # noqa: E402

ORIGINAL = "".join(f"line {n}\n" for n in range(1, 11))
CHANGE = """\
--- a/notes.txt
+++ b/notes.txt
@@ -3,3 +3,4 @@
 line 3
-line 4
+line four
+line four and a half
 line 5
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "notes.txt").write_text(ORIGINAL)
    return tmp_path


def test_a_hunk_replaces_exactly_its_lines(folder):
    assert apply(parse(CHANGE), folder) == ["notes.txt"]
    assert (folder / "notes.txt").read_text() == ORIGINAL.replace("line 4\n", "line four\nline four and a half\n")


def test_a_hunk_still_applies_when_lines_were_added_above_it(folder):
    (folder / "notes.txt").write_text("a new first line\n" + ORIGINAL)
    apply(parse(CHANGE), folder)
    assert (folder / "notes.txt").read_text().startswith("a new first line\nline 1\nline 2\nline 3\nline four\n")


def test_a_changed_context_line_stops_the_hunk(folder):
    # The removed line still matches; only the context after it does not.
    (folder / "notes.txt").write_text(ORIGINAL.replace("line 5\n", "line five\n"))
    with pytest.raises(PatchError) as failure:
        apply(parse(CHANGE), folder)
    message = str(failure.value)
    assert "notes.txt: hunk @@ -3,3 +3,4 @@ does not apply" in message
    assert "line 5 should be\n      'line 5'\n    but it is\n      'line five'" in message
    assert (folder / "notes.txt").read_text() == ORIGINAL.replace("line 5\n", "line five\n")


def test_a_changed_removed_line_stops_the_hunk(folder):
    (folder / "notes.txt").write_text(ORIGINAL.replace("line 4\n", "line 4, edited by the reader\n"))
    with pytest.raises(PatchError, match="line 4 should be"):
        apply(parse(CHANGE), folder)


def test_lines_that_occur_twice_elsewhere_are_ambiguous(folder):
    block = "line 3\nline 4\nline 5\n"
    (folder / "notes.txt").write_text("top\n" + block + "middle\n" + block)
    with pytest.raises(PatchError, match="its lines occur at 2, 6"):
        apply(parse(CHANGE), folder)


def test_nothing_is_written_unless_every_file_applies(folder):
    (folder / "other.txt").write_text("something else\n")
    broken = CHANGE + CHANGE.replace("notes.txt", "other.txt")
    with pytest.raises(PatchError, match="other.txt"):
        apply(parse(broken), folder)
    assert (folder / "notes.txt").read_text() == ORIGINAL


def test_a_diff_from_dev_null_creates_a_file(folder):
    creation = "--- /dev/null\n+++ b/sub/new.py\n@@ -0,0 +1,2 @@\n+first\n+second\n"
    apply(parse(creation), folder)
    assert (folder / "sub" / "new.py").read_text() == "first\nsecond\n"
    with pytest.raises(PatchError, match="exists already"):
        apply(parse(creation), folder)


def test_no_newline_at_end_of_file_is_honoured(folder):
    diff = "--- a/notes.txt\n+++ b/notes.txt\n@@ -10 +10 @@\n-line 10\n+the end\n\\ No newline at end of file\n"
    apply(parse(diff), folder)
    assert (folder / "notes.txt").read_text().endswith("line 9\nthe end")


@pytest.mark.parametrize(
    "diff,problem",
    [
        ("just some text\n", "not a unified diff"),
        ("--- a/notes.txt\n+++ b/notes.txt\n", "no hunk"),
        (CHANGE.replace("@@ -3,3 +3,4 @@", "@@ -3,4 +3,4 @@"), "promises 4 old and 4 new lines but holds 3 and 4"),
        (CHANGE.replace("a/notes.txt", "a/../outside.txt").replace("b/notes.txt", "b/../outside.txt"), "inside"),
        ("--- a/notes.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-line 1\n", "deletes this file"),
    ],
)
def test_malformed_or_unsafe_diffs_are_refused(folder, diff, problem):
    with pytest.raises(PatchError, match=problem):
        apply(parse(diff), folder)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(PatchError, match="notes.txt: no such file"):
        apply(parse(CHANGE), tmp_path)
