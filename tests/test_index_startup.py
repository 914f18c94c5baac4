"""The index thread at startup, in every step that has one (7-10): a reindex the
client asked for before the startup build began is that build, not a failure."""
import logging
import threading
from pathlib import Path

import pytest

from helpers import step_modules

STEPS = Path(__file__).resolve().parent.parent / "steps"
INDEX_STEPS = ["07-vector-index", "08-links-and-inbox", "09-watcher", "10-reconcile-and-ship"]


class BuiltByTheReindex:
    """What the reindex's build swaps in; the startup thread only asks it for its postings
    (and, in step 10, to store them)."""

    def keywords(self):
        return {}

    def save_keywords(self):
        pass


@pytest.mark.parametrize("folder", INDEX_STEPS)
def test_a_reindex_under_way_at_startup_is_waited_for_not_logged_as_a_failure(folder, tmp_path, caplog):
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "Note.md").write_text("# Note\n\nSome words.\n")
    with step_modules(STEPS / folder):
        from vault import Vault
        from vault_index import VaultIndex

        index = VaultIndex(Vault(tmp_path / "vault"), embedder=None, directory=tmp_path / "index")
        index.build_lock.acquire()  # the reindex's build, begun first
        caplog.set_level(logging.INFO)
        startup = threading.Thread(target=index.open, args=(True,), daemon=True)
        startup.start()
        startup.join(timeout=1)
        assert startup.is_alive() and not index.ready.is_set(), "startup gave up on the build under way"
        index.chunk_index = BuiltByTheReindex()
        index.build_lock.release()
        startup.join(timeout=10)
        assert index.ready.is_set() and isinstance(index.chunk_index, BuiltByTheReindex)
    assert "could not be built" not in caplog.text
