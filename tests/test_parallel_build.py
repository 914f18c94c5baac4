"""The first build on more than one core (parallel_build.py, from step 7), from outside:
the workers write the same index one process writes; a worker that dies fails the
build and leaves the old index as it was; a server killed mid-build leaves an index
that loads, and no worker behind. Steps 7 and 10 hold the two copies of the build's
writing side (ChunkIndex.write_new); parallel_build.py is one file, copied. Every wait is bounded."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from generated_vault import make_vault
from helpers import McpClient, StdioServer, distinct_copies, index_folder, rpc, step_modules
from launch import quiet_environment, wait_for_url
from manifest import find_step

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "guide" / "exercises"))
from probe import StandInOllama  # noqa: E402

STEPS = [find_step(7), find_step(10)]
NOTES = 240  # above parallel_build.PARALLEL_FROM: the server forks its workers
TIMEOUT = 60.0  # a build of NOTES notes on a busy machine; only ever reached when a test fails

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2, reason="workers are forked, on two cores or more")


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    folder = tmp_path_factory.mktemp("generated") / "vault"
    make_vault(folder, NOTES, seed=7)
    a_minute_ago = time.time_ns() - 60 * 10**9
    for note in folder.rglob("*.md"):  # old enough for step 10 to store their times: the same in every build
        os.utime(note, ns=(a_minute_ago, a_minute_ago))
    return folder


class Running:
    def __init__(self, process, log_path: Path):
        self.process, self.log_path = process, log_path
        self.client = McpClient(wait_for_url(process, log_path, TIMEOUT))
        self.client.session_id = self.client.open_session()

    def log(self) -> str:
        return self.log_path.read_text()

    def search(self, query: str) -> dict:
        call = rpc("tools/call", name="search_vault", arguments={"query": query, "mode": "keyword"})
        return self.client.send(self.client.session_id, call).json()["result"]

    def wait_until_searchable(self) -> dict:
        """The first search answered from the whole index: not an error, nor a partial
        answer given while the first build runs ("indexed")."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            result = self.search("river")
            if not result["isError"] and "indexed" not in result["structuredContent"]:
                return result
            time.sleep(0.1)
        pytest.fail(f"search never answered from a whole index; the log says:\n{self.log()}")

    def wait_for_log(self, words: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and words not in self.log():
            time.sleep(0.1)
        assert words in self.log()


@contextmanager
def serving(step, tmp_path: Path, vault: Path, *flags: str, env: dict | None = None):
    log_path = tmp_path / f"server-{time.monotonic_ns()}.log"
    command = [sys.executable, str(step.server), "--port", "0", "--vault", str(vault),
               "--index-dir", str(tmp_path / "index"), *flags]
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=quiet_environment(str(tmp_path / "unused")) | (env or {}))
    try:
        yield Running(process, log_path)
    finally:
        process.terminate()
        process.wait(timeout=10)


def note_files(index_dir: Path) -> dict[str, bytes]:
    """The live generation's note files (the folder index.json names) by name, and every
    notes- folder there is: a killed build leaves one of its own, half written, beside it."""
    index_dir = index_folder(index_dir)
    folders = sorted(folder.name for folder in index_dir.glob("notes-*"))
    live = index_dir / json.loads((index_dir / "index.json").read_text())["generation"]
    return {"folders": folders, **{file.name: file.read_bytes() for file in live.glob("*.json")}}


def whole_index(index_dir: Path) -> bool:
    """A manifest names a whole generation (step 10 names a first build's at once)."""
    manifest = index_folder(index_dir) / "index.json"
    return manifest.exists() and json.loads(manifest.read_text()).get("complete", True)


def children_of(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue  # gone meanwhile
    return found


def gone(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return True
    return state == "Z"  # a zombie has ended; only its parent's wait is missing


@pytest.mark.parametrize("step", STEPS, ids=lambda step: step.folder)
def test_the_workers_write_the_index_one_process_writes(step, tmp_path, vault):
    with serving(step, tmp_path, vault) as server:
        server.wait_until_searchable()
    by_workers = note_files(tmp_path / "index")

    with step_modules(step.path):
        import parallel_build
        from embeddings import make_embedder
        from vault import Vault
        from vault_index import VaultIndex

        assert parallel_build.worker_count(NOTES) >= 2  # the server above did fork its workers
        parallel_build.PARALLEL_FROM = NOTES + 1  # and now, the same build in this one process
        embedder, _ = make_embedder("hash")
        alone = VaultIndex(Vault(vault), embedder, tmp_path / "alone")
        alone.rebuild()
    in_one_process = note_files(tmp_path / "alone")

    assert len(by_workers) == len(in_one_process) > NOTES // 2
    if step.number == 10:  # each note's stamp and links come back from the workers with its chunks
        metas = [json.loads(data.partition(b"\n")[0])["meta"] for name, data in by_workers.items() if name != "folders"]
        assert all("size" in meta and meta["links"]["links"] is not None for meta in metas)
        assert sum(len(meta["links"]["links"]) for meta in metas) > NOTES
    assert {name: data for name, data in by_workers.items() if name != "folders"} == \
           {name: data for name, data in in_one_process.items() if name != "folders"}


@pytest.mark.parametrize("step", STEPS, ids=lambda step: step.folder)
def test_a_server_on_stdio_builds_with_its_workers_while_it_reads_its_input(step, tmp_path, vault):
    """The stdio transport's thread waits for a line, holding stdin's lock, as the workers start."""
    server = StdioServer(step.server, "--vault", str(vault), "--index-dir", str(tmp_path / "index"),
                         env=quiet_environment(str(tmp_path / "unused")))
    try:
        server.handshake()  # and then nothing: the transport waits for the next line while the build starts
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and not whole_index(tmp_path / "index"):
            time.sleep(0.1)
        assert whole_index(tmp_path / "index"), "the build never finished"
        result = server.ask(rpc("tools/call", id=2, name="search_vault", arguments={"query": "river"}))["result"]
        assert not result["isError"], result
    finally:
        server.stop()
    assert len(note_files(tmp_path / "index")) > NOTES // 2


KILLED_MID_ANSWER = """
import multiprocessing, os, signal, sys, time
from types import SimpleNamespace
import parallel_build
parallel_build.PARALLEL_FROM = 1

class Embedder:
    def embed_documents(self, texts):
        return [[1.0, 0.0, 0.5, 0.25] for _ in texts]

def read(path):  # a chunk of 4 MB: an answer of five far outgrows a pipe's buffer
    chunks = [SimpleNamespace(text=path, blob=b"." * 4_000_000)]
    return chunks if sys.argv[1] == "7" else (chunks, {})

notes = parallel_build.embedded_notes([f"Note {i}.md" for i in range(40)], read, Embedder())
first_task = [next(notes) for _ in range(parallel_build.NOTES_PER_TASK)]
# every worker has its tasks; from now on, until the next note is asked for, no answer is read
time.sleep(1)  # the workers' answers stop halfway into their pipes; one of them is killed there
victim, *others = multiprocessing.active_children()
os.kill(victim.pid, signal.SIGKILL)
try:
    list(notes)
except parallel_build.WorkerFailed as error:
    stopped = [worker.exitcode == -signal.SIGKILL and not worker.is_alive() for worker in others]
    print("failed:", error, "| the other workers stopped by the build:", all(stopped))
else:
    print("the build went on without a worker")
"""


@pytest.mark.parametrize("step", STEPS, ids=lambda step: step.folder)
def test_a_worker_killed_halfway_through_an_answer_fails_the_build_at_once(step):
    """The out-of-memory killer does not wait for a worker to finish sending: the build
    must fail at once, not wait forever for the rest of the answer."""
    script = subprocess.run([sys.executable, "-c", KILLED_MID_ANSWER, str(step.number)], cwd=step.path,
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert script.stdout.strip() == "failed: a worker process ended before it answered " \
                                    "| the other workers stopped by the build: True", script.stdout + script.stderr


A_FORK_FAILS = """
import multiprocessing, sys
from types import SimpleNamespace
import parallel_build
parallel_build.PARALLEL_FROM = 1
first_start, started = parallel_build.start_worker, []

def start_worker(*args):  # the second fork fails, as it does when the system has no processes left
    started.append(1)
    if len(started) == 2:
        raise BlockingIOError(11, "Resource temporarily unavailable")
    return first_start(*args)

class Embedder:
    def embed_documents(self, texts):
        return [[1.0, 0.5] for _ in texts]

parallel_build.start_worker = start_worker
read = lambda path: [SimpleNamespace(text=path)] if sys.argv[1] == "7" else ([SimpleNamespace(text=path)], {})
try:
    list(parallel_build.embedded_notes([f"Note {i}.md" for i in range(20)], read, Embedder()))
except OSError as error:
    print("failed:", error.strerror, "| workers left:", len(multiprocessing.active_children()))
"""


@pytest.mark.parametrize("step", STEPS, ids=lambda step: step.folder)
def test_a_fork_that_fails_stops_the_workers_already_started(step):
    script = subprocess.run([sys.executable, "-c", A_FORK_FAILS, str(step.number)], cwd=step.path,
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert script.stdout.strip() == "failed: Resource temporarily unavailable | workers left: 0", \
        script.stdout + script.stderr


class KillingOllama(StandInOllama):
    """A stand-in for Ollama that, at its kill_at-th request for document embeddings,
    SIGKILLs the processes kill() chooses among the server's, and answers 500."""

    def __init__(self):
        super().__init__()
        self.server_pid, self.kill_at, self.answered, self.killed = None, None, 0, []

    def answer(self, path, body):
        if path == "/api/embed" and str((body or {}).get("input", [""])[0]).startswith("search_document"):
            self.answered += 1
            if self.kill_at is not None and self.answered == self.kill_at:
                deadline = time.monotonic() + TIMEOUT
                while self.server_pid is None and time.monotonic() < deadline:  # the test sets it once started
                    time.sleep(0.01)
                self.killed = self.victims()
                for pid in self.killed:
                    os.kill(pid, signal.SIGKILL)
                return 500, {"error": "killed"}
        return super().answer(path, body)


class KillingAWorker(KillingOllama):
    def victims(self) -> list[int]:
        return children_of(self.server_pid)[:1]


class KillingTheServer(KillingOllama):
    def victims(self) -> list[int]:
        self.workers = children_of(self.server_pid)
        return [self.server_pid]


def reindex_under(ollama, step, tmp_path, vault) -> subprocess.Popen:
    """Build once with the stand-in, then start a --reindex whose build it will meet."""
    flags, env = ("--embedder", "ollama"), {"OLLAMA_HOST": ollama.url}
    with serving(step, tmp_path, vault, *flags, env=env) as server:
        server.wait_until_searchable()
    return flags, env


@pytest.mark.parametrize("step", STEPS, ids=lambda step: step.folder)
def test_a_worker_that_dies_fails_the_build_and_the_old_index_stays(step, tmp_path, vault):
    with KillingAWorker() as ollama:
        flags, env = reindex_under(ollama, step, tmp_path, vault)
        before = note_files(tmp_path / "index")
        ollama.answered, ollama.kill_at, ollama.server_pid = 0, 3, None
        with serving(step, tmp_path, vault, *flags, "--reindex", env=env) as server:
            ollama.server_pid = server.process.pid
            server.wait_for_log("index: could not be built")
            assert len(ollama.killed) == 1
            assert server.search("river")["isError"]  # "could not be built", not an answer from half an index
            assert note_files(tmp_path / "index") == before  # no half-written generation is left
        ollama.kill_at = None
        with serving(step, tmp_path, vault, *flags, env=env) as server:
            assert server.wait_until_searchable()["structuredContent"]["results"]
            assert "indexing:" not in server.log()  # loaded as it was, not built again


@pytest.mark.parametrize("step", STEPS, ids=lambda step: step.folder)
def test_a_server_killed_mid_build_leaves_an_index_that_loads_and_no_worker_behind(step, tmp_path, vault):
    with KillingTheServer() as ollama:
        flags, env = reindex_under(ollama, step, tmp_path, vault)
        before = note_files(tmp_path / "index")
        ollama.answered, ollama.kill_at, ollama.server_pid = 0, 3, None
        log_path = tmp_path / "killed.log"
        command = [sys.executable, str(step.server), "--port", "0", "--vault", str(vault),
                   "--index-dir", str(tmp_path / "index"), *flags, "--reindex"]
        with open(log_path, "w") as log:
            victim = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                      env=quiet_environment(str(tmp_path / "unused")) | env)
        ollama.server_pid = victim.pid
        victim.wait(timeout=TIMEOUT)
        assert victim.returncode == -signal.SIGKILL, log_path.read_text()
        assert ollama.workers  # it was building with workers when it died
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(map(gone, ollama.workers)):
            time.sleep(0.1)
        assert all(map(gone, ollama.workers)), "a worker outlived its server"
        after = note_files(tmp_path / "index")
        assert {name: data for name, data in after.items() if name != "folders"} == \
               {name: data for name, data in before.items() if name != "folders"}  # the old files, whole

        ollama.kill_at = None
        with serving(step, tmp_path, vault, *flags, env=env) as server:
            assert server.wait_until_searchable()["structuredContent"]["results"]
            assert "indexing:" not in server.log()


class HoldingOllama(StandInOllama):
    """A stand-in for Ollama that answers the first batch of documents and holds every
    later one until the block ends: the build, and its workers, wait as long as a test needs."""

    def __init__(self):
        super().__init__()
        self.batches, self.released = 0, threading.Event()

    def answer(self, path, body):
        if path == "/api/embed" and str((body or {}).get("input", [""])[0]).startswith("search_document"):
            self.batches += 1
            if self.batches > 1:
                self.released.wait(TIMEOUT)
        return super().answer(path, body)

    def __exit__(self, *exc):
        self.released.set()
        return super().__exit__(*exc)


def listening_inodes(port: int) -> set[str]:
    """The inodes of the sockets listening on `port` (Linux's /proc/net)."""
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path("/proc/net", table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rpartition(":")[2], 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.add(fields[9])
    return found


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets process `pid` holds."""
    found = set()
    for fd in Path("/proc", str(pid), "fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(target[len("socket:["):-1])
    return found


@pytest.mark.parametrize("step", [find_step(n) for n in distinct_copies("http_transport.py", since=7)],
                         ids=lambda step: step.folder)
def test_a_server_killed_mid_build_can_be_started_again_on_its_port_at_once(step, tmp_path, vault):
    """The build's forked workers do not hold the listening socket: with it, a server
    killed mid-build left its port taken, and connections queued there unanswered."""
    with HoldingOllama() as ollama:
        env = {"OLLAMA_HOST": ollama.url}
        with serving(step, tmp_path, vault, "--embedder", "ollama", env=env) as server:
            port = server.client.port
            deadline = time.monotonic() + TIMEOUT
            while len(workers := children_of(server.process.pid)) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(workers) >= 2, server.log()
            listening = listening_inodes(port)
            assert listening and listening <= socket_inodes(server.process.pid)
            assert {pid: socket_inodes(pid) & listening for pid in workers} == {pid: set() for pid in workers}
            server.process.kill()
            server.process.wait(timeout=10)
            command = [sys.executable, str(step.server), "--port", str(port), "--vault", str(vault),
                       "--index-dir", str(tmp_path / "index"), "--embedder", "ollama"]
            log_path = tmp_path / "again.log"
            with open(log_path, "w") as log:
                again = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         env=quiet_environment(str(tmp_path / "unused")) | env)
            try:
                url = wait_for_url(again, log_path, TIMEOUT)
                assert McpClient(url).initialize().status == 200
            finally:
                again.kill()
                again.wait(timeout=10)
