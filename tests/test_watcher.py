"""Step 9's watcher: snapshots compared, jobs debounced and coalesced, one worker,
subscribers told, a clean stop; and an index that converges to a fresh build.

Real files in temporary vaults and real threads, with intervals of tens of
milliseconds. Every wait is bounded: wait_until polls a condition until a timeout."""
import hashlib
import logging
import os
import random
import threading
import time
from pathlib import Path

import pytest

from helpers import step_modules

STEPS = Path(__file__).resolve().parent.parent / "steps"




with step_modules(STEPS / "09-watcher", STEPS / "07-vector-index"):
    from index import ChunkIndex
    from vault import Vault
    from vault_index import VaultIndex
    from watcher import INDEX, REMOVE, Changes, JobQueue, Stamp, Watcher, compare

POLL = 0.05
DEBOUNCE = 0.2
TIMEOUT = 10.0  # only ever reached when a test fails


def wait_until(condition, timeout=TIMEOUT, what="the condition"):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout} s")
        time.sleep(0.005)


class CountingVault(Vault):
    """A vault that counts the watcher's polls (each one lists the notes once)."""

    polls = 0

    def list_notes(self, folder=None):
        self.polls += 1
        return super().list_notes(folder)


class Recorder:
    """The functions a watcher is given, writing down every call.

    on_index reads the note, as a real indexer does, so a note that is gone raises."""

    def __init__(self, vault):
        self.vault = vault
        self.calls: list[tuple[str, str]] = []
        self.texts: dict[str, str] = {}
        self.notes_changed: list[str] = []
        self.lists_changed = 0
        self.lock = threading.Lock()

    def on_index(self, path):
        text = (self.vault.root / path).read_text(encoding="utf-8")
        with self.lock:
            self.calls.append((INDEX, path))
            self.texts[path] = text

    def on_remove(self, path):
        with self.lock:
            self.calls.append((REMOVE, path))

    def on_note_changed(self, path):
        with self.lock:
            self.notes_changed.append(path)

    def on_list_changed(self):
        with self.lock:
            self.lists_changed += 1

    def jobs(self, path):
        with self.lock:
            return [kind for kind, called in self.calls if called == path]


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    (root / "Bread").mkdir(parents=True)
    (root / "Bread" / "Focaccia.md").write_text("# Focaccia\n\nOil, salt, a long rise.\n", encoding="utf-8")
    (root / "Kimchi.md").write_text("# Kimchi\n\nSalt the cabbage.\n", encoding="utf-8")
    return CountingVault(root)


@pytest.fixture
def recorder(vault):
    return Recorder(vault)


@pytest.fixture
def watching(vault, recorder):
    """A started watcher with the recorder's functions; stopped after the test."""
    watchers = []

    def start(on_index=None, debounce=DEBOUNCE, **functions):
        watcher = Watcher(vault, on_index or recorder.on_index, functions.pop("on_remove", recorder.on_remove),
                          on_note_changed=recorder.on_note_changed, on_list_changed=recorder.on_list_changed,
                          poll_interval=POLL, debounce=debounce)
        watcher.start()
        watchers.append(watcher)
        return watcher

    yield start
    for watcher in watchers:
        watcher.stop(timeout=2)


def settle(watcher, vault):
    """Wait until a whole poll has run since now and every job it queued is done."""
    polls = vault.polls
    wait_until(lambda: vault.polls >= polls + 2 and watcher.pending() == 0, what="the watcher settling")


def write(vault, path, text):
    file = vault.root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")


# ---- snapshots compared: pure functions -----------------------------------------

def test_compare_tells_created_changed_deleted_and_renamed_apart():
    before = {"a.md": Stamp(10, 1, 101, 1), "b.md": Stamp(20, 2, 102, 1), "c.md": Stamp(30, 3, 103, 1),
              "d.md": Stamp(5, 5, 105, 1)}
    after = {
        "a.md": Stamp(10, 1, 101, 1),  # untouched
        "b.md": Stamp(21, 9, 102, 1),  # written
        "moved/c.md": Stamp(30, 3, 103, 1),  # c.md moved: the same file, untouched
        "e.md": Stamp(40, 4, 104, 1),  # new
    }
    assert compare(before, after) == Changes(
        created=["e.md"], changed=["b.md"], deleted=["d.md"], renamed=[("c.md", "moved/c.md")]
    )


def test_a_note_gone_and_a_different_one_new_are_no_rename():
    before = {"old.md": Stamp(10, 1, 101, 1)}
    after = {"new.md": Stamp(10, 2, 101, 1)}  # renamed and then written: its time moved on
    assert compare(before, after) == Changes(created=["new.md"], changed=[], deleted=["old.md"], renamed=[])


def test_a_note_replaced_by_a_new_file_is_changed():
    # Editors that save atomically write a new file and rename it over the note.
    assert compare({"a.md": Stamp(10, 1, 101, 1)}, {"a.md": Stamp(10, 1, 202, 1)}).changed == ["a.md"]



def test_a_note_that_gains_a_name_is_changed():
    # A hard link made to it, from outside the vault say, decides whether it may be served.
    assert compare({"a.md": Stamp(10, 1, 101, 1)}, {"a.md": Stamp(10, 1, 101, 2)}).changed == ["a.md"]

# ---- the queue ----------------------------------------------------------------

def test_a_newer_job_replaces_the_waiting_one_and_waits_again():
    queue = JobQueue(debounce=0.1)
    queue.put(INDEX, "a.md")
    queue.put(INDEX, "b.md")
    time.sleep(0.05)
    queue.put(REMOVE, "a.md")  # a.md changed again: its job is replaced, and due last
    assert len(queue) == 2
    first, second = queue.take(), queue.take()
    assert (first.kind, first.path) == (INDEX, "b.md")
    assert (second.kind, second.path) == (REMOVE, "a.md")
    assert second.due - first.due >= 0.05  # due again from the second put; a busy machine only adds to it


def test_take_waits_for_the_debounce():
    queue = JobQueue(debounce=0.15)
    put_at = time.monotonic()
    queue.put(INDEX, "a.md")
    assert queue.take().path == "a.md"
    assert time.monotonic() - put_at >= 0.15


def test_a_closed_queue_hands_out_nothing():
    queue = JobQueue(debounce=0)
    queue.put(INDEX, "a.md")
    queue.close()
    assert queue.take() is None


# ---- the watcher, running --------------------------------------------------------

def test_a_new_note_is_indexed_and_the_list_is_said_to_change(vault, recorder, watching):
    watcher = watching()
    write(vault, "Inbox/Sourdough.md", "# Sourdough\n")
    settle(watcher, vault)
    assert recorder.jobs("Inbox/Sourdough.md") == [INDEX]
    assert recorder.notes_changed == ["Inbox/Sourdough.md"]
    assert recorder.lists_changed == 1
    assert recorder.calls == [(INDEX, "Inbox/Sourdough.md")]  # the notes there before start are not jobs


def test_an_edit_is_indexed_and_the_list_stays(vault, recorder, watching):
    watcher = watching()
    write(vault, "Kimchi.md", "# Kimchi\n\nSalt the cabbage, then rinse it.\n")
    settle(watcher, vault)
    assert recorder.calls == [(INDEX, "Kimchi.md")]
    assert recorder.texts["Kimchi.md"].endswith("then rinse it.\n")
    assert recorder.notes_changed == ["Kimchi.md"]
    assert recorder.lists_changed == 0


def test_rapid_edits_coalesce_into_one_job(vault, recorder, watching):
    watcher = watching(debounce=0.5)
    for number in range(10):  # a save every 50 ms, as if typing: never quiet for 0.5 s
        write(vault, "Kimchi.md", "# Kimchi\n\n" + "Salt. " * (number + 1))
        wait_until(lambda: watcher.pending() == 1, what="the edit being seen")
        time.sleep(0.05)
    settle(watcher, vault)
    assert recorder.jobs("Kimchi.md") == [INDEX]
    assert recorder.texts["Kimchi.md"].count("Salt.") == 10  # the last version


def test_a_rename_is_a_removal_and_a_new_note(vault, recorder, watching, caplog):
    caplog.set_level(logging.INFO, logger="watcher")
    watcher = watching()
    (vault.root / "Archive").mkdir()
    os.rename(vault.root / "Kimchi.md", vault.root / "Archive" / "Kimchi.md")
    settle(watcher, vault)
    assert sorted(recorder.calls) == [(INDEX, "Archive/Kimchi.md"), (REMOVE, "Kimchi.md")]
    assert recorder.lists_changed == 1
    assert "Kimchi.md was renamed Archive/Kimchi.md" in caplog.text


def test_a_deleted_note_is_removed(vault, recorder, watching):
    watcher = watching()
    (vault.root / "Bread" / "Focaccia.md").unlink()
    settle(watcher, vault)
    assert recorder.calls == [(REMOVE, "Bread/Focaccia.md")]
    assert recorder.notes_changed == ["Bread/Focaccia.md"]
    assert recorder.lists_changed == 1


def test_a_note_deleted_and_written_again_before_it_is_quiet_is_indexed(vault, recorder, watching):
    watcher = watching(debounce=0.5)
    (vault.root / "Kimchi.md").unlink()
    wait_until(lambda: watcher.pending() == 1, what="the deletion being seen")
    write(vault, "Kimchi.md", "# Kimchi\n\nBack again.\n")
    settle(watcher, vault)
    assert recorder.jobs("Kimchi.md") == [INDEX]


def test_a_burst_of_300_new_notes_gives_one_job_each(vault, recorder, watching, tmp_path):
    watcher = watching()
    unpacked = tmp_path / "Burst"  # written outside the vault, then moved in at once, as an unzip or a sync does
    unpacked.mkdir()
    for number in range(300):
        (unpacked / f"{number:03d}.md").write_text(f"# Note {number}\n", encoding="utf-8")
    os.rename(unpacked, vault.root / "Burst")
    settle(watcher, vault)
    assert sorted(recorder.calls) == [(INDEX, f"Burst/{number:03d}.md") for number in range(300)]
    assert recorder.lists_changed == 1  # once for the poll that saw them, not once per note


def test_a_note_that_vanishes_while_it_is_indexed_is_removed(vault, recorder, watching, caplog):
    def vanishing(path):  # the note is deleted after the poll saw it, before the read
        (vault.root / path).unlink()
        recorder.on_index(path)

    watcher = watching(on_index=vanishing)
    write(vault, "Kimchi.md", "# Kimchi\n\nA new version.\n")
    settle(watcher, vault)
    assert recorder.calls[0] == (REMOVE, "Kimchi.md")
    assert set(recorder.calls) == {(REMOVE, "Kimchi.md")}  # and the next poll's removal, maybe
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


def test_a_failing_job_is_logged_and_the_worker_goes_on(vault, recorder, watching, caplog):
    def failing_for_kimchi(path):
        if path == "Kimchi.md":
            raise RuntimeError("Ollama is not running")
        recorder.on_index(path)

    watcher = watching(on_index=failing_for_kimchi)
    write(vault, "Kimchi.md", "# Kimchi\n\nEdited.\n")
    settle(watcher, vault)
    write(vault, "Bread/Focaccia.md", "# Focaccia\n\nEdited.\n")
    settle(watcher, vault)
    assert recorder.calls == [(INDEX, "Bread/Focaccia.md")]
    assert "could not index Kimchi.md" in caplog.text
    assert "Ollama is not running" in caplog.text


def test_failing_subscribers_stop_nothing(vault, recorder):
    def failing(*path):
        raise RuntimeError("the client went away")

    watcher = Watcher(vault, recorder.on_index, recorder.on_remove, on_note_changed=failing,
                      on_list_changed=failing, poll_interval=POLL, debounce=DEBOUNCE)
    watcher.start()
    try:
        write(vault, "New.md", "# New\n")
        settle(watcher, vault)
        write(vault, "Newer.md", "# Newer\n")
        settle(watcher, vault)
    finally:
        watcher.stop()
    assert sorted(recorder.calls) == [(INDEX, "New.md"), (INDEX, "Newer.md")]


def test_two_jobs_never_run_at_once_even_for_one_note(vault, recorder, watching):
    running, most, lock = 0, 0, threading.Lock()
    first_started, release = threading.Event(), threading.Event()

    def slow(path):
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        first_started.set()
        release.wait(TIMEOUT)
        recorder.on_index(path)
        with lock:
            running -= 1

    watcher = watching(on_index=slow, debounce=0.05)
    write(vault, "Kimchi.md", "# Kimchi\n\nVersion 2.\n")
    wait_until(first_started.is_set, what="the first job starting")
    write(vault, "Kimchi.md", "# Kimchi\n\nVersion 3, while version 2 is being indexed.\n")
    write(vault, "Bread/Focaccia.md", "# Focaccia\n\nEdited too.\n")
    wait_until(lambda: watcher.pending() == 3, what="the second edits being seen")
    time.sleep(0.1)  # both new jobs are due: a second worker would start them now
    release.set()
    settle(watcher, vault)
    assert most == 1
    assert recorder.jobs("Kimchi.md") == [INDEX, INDEX]
    assert "Version 3" in recorder.texts["Kimchi.md"]


def test_stop_lets_the_job_in_hand_finish_and_drops_the_waiting(vault, recorder, watching):
    started, finished = threading.Event(), threading.Event()

    def slow(path):
        started.set()
        time.sleep(0.2)
        recorder.on_index(path)
        finished.set()

    watcher = watching(on_index=slow, debounce=0.05)
    write(vault, "Kimchi.md", "# Kimchi\n\nEdited.\n")
    wait_until(started.is_set, what="the job starting")
    write(vault, "Bread/Focaccia.md", "# Focaccia\n\nEdited.\n")
    wait_until(lambda: watcher.pending() == 2, what="the second edit being seen")
    assert watcher.stop(timeout=2) is True
    assert finished.is_set() and watcher.pending() == 0
    assert recorder.calls == [(INDEX, "Kimchi.md")]
    assert not any(thread.is_alive() for thread in watcher._threads)


def test_stop_gives_up_on_a_job_that_hangs(vault, recorder, watching):
    started, release = threading.Event(), threading.Event()

    def hanging(path):
        started.set()
        release.wait(TIMEOUT)

    watcher = watching(on_index=hanging, debounce=0.05)
    write(vault, "Kimchi.md", "# Kimchi\n\nEdited.\n")
    wait_until(started.is_set, what="the job starting")
    began = time.monotonic()
    assert watcher.stop(timeout=0.2) is False
    assert time.monotonic() - began < 5  # waiting for the job would take TIMEOUT
    assert all(thread.daemon for thread in watcher._threads)  # the process can still exit
    release.set()


# ---- convergence with a real index ----------------------------------------------

class TinyEmbedder:
    """Deterministic vectors from a hash of the text: enough to store and compare."""

    name, dimension = "tiny-8", 8

    def embed_documents(self, texts):
        return [[byte - 128 or 1 for byte in hashlib.sha256(text.encode()).digest()[:8]] for text in texts]


def contents(index) -> dict[str, list[str]]:
    """Each note of the index with the texts of its chunks, in order."""
    with index.lock:
        return {path: [index.chunks[row].text for row in rows] for path, rows in index.rows_by_note.items()}


@pytest.mark.parametrize("seed", [1, 2])
def test_the_index_converges_to_a_fresh_build(tmp_path, seed):
    rng = random.Random(seed)
    (tmp_path / "vault").mkdir()
    vault = CountingVault(tmp_path / "vault")
    embedder = TinyEmbedder()
    vault_index = VaultIndex(vault, embedder, tmp_path / "index")
    for number in range(8):
        write(vault, f"Notes/Note {number}.md", f"# Note {number}\n\nFirst words of note {number}.\n")
    chunks = [chunk for path in vault.list_notes() for chunk in vault_index.note_chunks(path)]
    index = ChunkIndex.build(tmp_path / "index", embedder, chunks)

    def index_note(path):  # as server.py wires it: VaultIndex's chunks, the embedder, the index
        note_chunks = vault_index.note_chunks(path)
        index.update_note(path, note_chunks, embedder.embed_documents([chunk.text for chunk in note_chunks]))

    watcher = Watcher(vault, index_note, index.remove_note, poll_interval=POLL, debounce=0.1)
    watcher.start()
    try:
        for step in range(40):
            notes = vault.list_notes()
            action = rng.choice(["create", "edit", "edit", "rename", "delete"] if notes else ["create"])
            if action == "create":
                name = f"{rng.choice(['Notes', 'Inbox', 'Archive/Old'])}/New {step}.md"
                write(vault, name, f"# New {step}\n\nWritten at step {step}.\n\n## More\n\nA section.\n")
            elif action == "edit":
                path = rng.choice(notes)
                with open(vault.root / path, "a", encoding="utf-8") as file:
                    file.write(f"\n## Edit {step}\n\nAdded at step {step}.\n")
            elif action == "rename":
                path = rng.choice(notes)
                target = vault.root / rng.choice(["Notes", "Inbox", "Archive"]) / f"Renamed {step}.md"
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(vault.root / path, target)
            else:
                (vault.root / rng.choice(notes)).unlink()
            time.sleep(rng.choice([0, 0, 0.01, 0.03, 0.08]))  # some changes in one poll, some in several
        settle(watcher, vault)
    finally:
        assert watcher.stop()
    final = [chunk for path in vault.list_notes() for chunk in vault_index.note_chunks(path)]
    fresh = ChunkIndex.build(tmp_path / "fresh", embedder, final)
    assert contents(index) == contents(fresh)
    assert sorted(index.note_paths()) == vault.list_notes()
