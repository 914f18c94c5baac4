"""`make guide-check` fails when it should: the real guide/sync.py, copied into a small
repository in a temporary folder (it finds guide/ and steps/ next to itself), run
as the Makefile runs it, on a tree that has drifted one way at a time."""
import shutil
import subprocess
import sys

import pytest

from manifest import ROOT

SERVER = """\
class Handler:
    # region answer
    def answer(self):
        if self.ready:
            return 1
        return 0
    # endregion answer
"""
TRANSCRIPT = "> POST /mcp\n>\n{}\n< HTTP/1.1 202 Accepted\n<\n"
CHAPTER = """\
# Demo

<!-- include: 01-demo/server.py#answer -->
<!-- /include -->

<!-- include: 01-demo/wire/01-hello.out -->
<!-- /include -->
"""


def sync_py(root, *args):
    return subprocess.run(
        [sys.executable, str(root / "guide" / "sync.py"), *args], capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def repo(tmp_path):
    """A repository with one step, one chapter and the real sync.py, the chapter written by `make guide`."""
    (tmp_path / "guide").mkdir()
    shutil.copy(ROOT / "guide" / "sync.py", tmp_path / "guide" / "sync.py")
    step = tmp_path / "steps" / "01-demo"
    (step / "wire").mkdir(parents=True)
    (step / "server.py").write_text(SERVER)
    (step / "wire" / "01-hello.sh").write_text("post <<'JSON'\n{}\nJSON\n")
    (step / "wire" / "01-hello.out").write_text(TRANSCRIPT)
    (tmp_path / "guide" / "01-demo.md").write_text(CHAPTER)
    written = sync_py(tmp_path)
    assert written.returncode == 0, written.stderr
    return tmp_path


def chapter(repo):
    return repo / "guide" / "01-demo.md"


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path.name}"
    path.write_text(text.replace(old, new, 1))


def assert_check_fails_with(repo, problem):
    done = sync_py(repo, "--check")
    assert done.returncode == 1
    assert f"guide: {problem}\n" in done.stderr
    assert "run `make guide`" in done.stderr
    return done


def test_guide_writes_the_quoted_blocks_with_their_indentation(repo):
    text = chapter(repo).read_text()
    assert "```python\n    def answer(self):\n        if self.ready:\n            return 1\n" in text
    assert "```console\n$ steps/01-demo/wire/01-hello.sh\n> POST /mcp\n" in text


def test_guide_check_passes_on_a_tree_in_sync(repo):
    done = sync_py(repo, "--check")
    assert done.returncode == 0, done.stderr
    assert "guide: 1 chapters match the steps" in done.stdout


def test_guide_check_fails_when_the_quoted_code_was_re_indented_in_the_chapter(repo):
    edit(chapter(repo), "            return 1\n", "        return 1\n")
    assert_check_fails_with(repo, "01-demo.md: quoted code or transcript differs from the steps")


def test_guide_check_fails_when_the_code_was_re_indented(repo):
    edit(repo / "steps" / "01-demo" / "server.py", "            return 1\n", "            return  1\n")
    assert_check_fails_with(repo, "01-demo.md: quoted code or transcript differs from the steps")
    edit(repo / "steps" / "01-demo" / "server.py", "            return  1\n", "\treturn 1\n")
    assert_check_fails_with(repo, "01-demo.md: quoted code or transcript differs from the steps")


def test_guide_check_fails_when_a_transcript_gained_a_blank_line(repo):
    (repo / "steps" / "01-demo" / "wire" / "01-hello.out").write_text(TRANSCRIPT.replace(">\n{}", ">\n\n{}"))
    assert_check_fails_with(repo, "01-demo.md: quoted code or transcript differs from the steps")


def test_guide_check_fails_when_a_quoted_region_is_gone(repo):
    server = repo / "steps" / "01-demo" / "server.py"
    server.write_text(server.read_text().replace("# region answer", "# region reply").replace(
        "# endregion answer", "# endregion reply"))
    done = assert_check_fails_with(repo, "01-demo.md: steps/01-demo/server.py has no region 'answer'")
    assert "no chapter quotes this region" in done.stderr  # and the renamed one is quoted nowhere


def test_guide_check_fails_when_a_quoted_file_is_gone(repo):
    (repo / "steps" / "01-demo" / "wire" / "01-hello.out").unlink()
    assert_check_fails_with(repo, "01-demo.md: no file steps/01-demo/wire/01-hello.out")


def test_guide_check_fails_when_a_transcript_is_shown_nowhere(repo):
    (repo / "steps" / "01-demo" / "wire" / "02-more.out").write_text("> GET /mcp\n")
    assert_check_fails_with(repo, "steps/01-demo/wire/02-more.out: no chapter shows this transcript")


def test_guide_check_fails_when_a_region_of_the_shared_data_folder_is_quoted_nowhere(repo):
    (repo / "steps" / "steps.toml").write_text('[data]\nfolder = "shared"\nfiles = []\norigin = []\n')
    (repo / "steps" / "shared").mkdir()
    (repo / "steps" / "shared" / "make_table.py").write_text("# region recipe\nSIZE = 256\n# endregion recipe\n")
    assert_check_fails_with(repo, "steps/shared/make_table.py#recipe: no chapter quotes this region")

    edit(chapter(repo), "# Demo\n", "# Demo\n\n<!-- include: shared/make_table.py#recipe -->\n<!-- /include -->\n")
    assert sync_py(repo).returncode == 0
    assert "SIZE = 256" in chapter(repo).read_text()
    assert sync_py(repo, "--check").returncode == 0


def test_guide_check_changes_nothing_on_a_drifted_tree(repo):
    edit(chapter(repo), "            return 1\n", "        return 1\n")
    before = chapter(repo).read_text()
    sync_py(repo, "--check")
    assert chapter(repo).read_text() == before


def test_guide_rewrites_a_drifted_chapter_and_the_check_then_passes(repo):
    edit(chapter(repo), "            return 1\n", "        return 1\n")
    rewritten = sync_py(repo)
    assert rewritten.returncode == 0
    assert "rewrote guide/01-demo.md" in rewritten.stdout
    assert sync_py(repo, "--check").returncode == 0


def test_guide_exits_1_when_a_quoted_region_is_gone_and_leaves_the_chapter_alone(repo):
    before = chapter(repo).read_text()
    server = repo / "steps" / "01-demo" / "server.py"
    server.write_text(server.read_text().replace("    # endregion answer\n", ""))
    done = sync_py(repo)
    assert done.returncode == 1
    assert "region answer is never closed" in done.stderr
    assert chapter(repo).read_text() == before
