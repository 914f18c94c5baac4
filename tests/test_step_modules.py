"""helpers.step_modules: a test gets the step it names, whatever ran before it."""
import sys
from pathlib import Path

from helpers import STEPS_DIR, step_modules

STEP5 = STEPS_DIR / "05-parsing-notes"
STEP7 = STEPS_DIR / "07-vector-index"


def folder_of(module) -> str:
    return Path(module.__file__).parent.name


def test_a_copy_left_by_another_step_is_not_the_one_imported(monkeypatch):
    with step_modules(STEP7):
        import notes as step7_notes
    monkeypatch.setitem(sys.modules, "notes", step7_notes)  # as a file that put step 7 on sys.path would leave it
    with step_modules(STEP5):
        import notes
    assert folder_of(notes) == "05-parsing-notes"
    assert sys.modules["notes"] is step7_notes  # and the block gives it back


def test_a_module_only_another_step_has_is_hidden_inside_the_block(monkeypatch):
    with step_modules(STEP7):
        import vault_index
    monkeypatch.setitem(sys.modules, "vault_index", vault_index)
    with step_modules(STEP5):
        assert "vault_index" not in sys.modules  # step 5 has none: an import of it must fail, not borrow step 7's


def test_every_block_loads_fresh_modules_and_leaves_none_behind():
    modules, path = set(sys.modules), sys.path[:]
    with step_modules(STEP5):
        import frontmatter as first
    with step_modules(STEP5):
        import frontmatter as second
        sys.path.insert(0, str(STEP7))  # as tests/eval.py does for make eval
    assert first is not second  # no cache or module state carries over from another test file
    assert set(sys.modules) == modules and sys.path == path
