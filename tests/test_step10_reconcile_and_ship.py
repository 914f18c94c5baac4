"""Step 10 from outside: what changed while the server was stopped shows after a
restart, and the one log line counts exactly that; a reconcile killed part way
resumes at the next start; options come from the environment, flags win over it;
--help names every variable; `make run` starts without Ollama and writes nothing
into the repository. Every wait is bounded."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import McpClient, rpc
from launch import quiet_environment, wait_for_url
from manifest import SAMPLE_VAULT, find_step

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "guide" / "exercises"))
from probe import StandInOllama  # noqa: E402

STEP = find_step(10)
TIMEOUT = 15.0  # only ever reached when a test fails
A_MINUTE_AGO = time.time_ns() - 60 * 10**9
REPORT = re.compile(r"reconciled: (\d+) new, (\d+) changed, (\d+) removed, (\d+) unchanged \((\d+) touched")
NO_OLLAMA = "http://127.0.0.1:9"  # the discard port: nothing answers there


class Running:
    """A server started by serving(): its process, its MCP client (a session open),
    and its log."""

    def __init__(self, process, url, log_path: Path):
        self.process, self.log_path = process, log_path
        self.client = McpClient(url)
        self.client.session_id = self.client.open_session()

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_for_log(self, pattern: str) -> re.Match:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            match = re.search(pattern, self.log())
            if match:
                return match
            time.sleep(0.05)
        pytest.fail(f"the log never said {pattern!r}; it says:\n{self.log()}")

    def report(self) -> tuple[int, ...]:
        """new, changed, removed, unchanged, touched: the startup reconcile's one line."""
        return tuple(int(number) for number in self.wait_for_log(REPORT.pattern).groups())

    def tool(self, name: str, **arguments) -> dict:
        reply = self.client.send(self.client.session_id, rpc("tools/call", name=name, arguments=arguments)).json()
        assert reply["result"]["isError"] is False, reply
        return reply["result"]["structuredContent"]

    def wait_until_searchable(self) -> None:
        """Until a search answers from the whole index: it is built and stored (the progress
        line "indexed N notes" comes a moment before the index is written; a search during
        the build answers too, from part of it, and says so with `indexed`)."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            call = rpc("tools/call", name="search_vault", arguments={"query": "bread"})
            result = self.client.send(self.client.session_id, call).json()["result"]
            if not result["isError"] and "indexed" not in result["structuredContent"]:
                return
            time.sleep(0.05)
        pytest.fail(f"search never answered; the log says:\n{self.log()}")

    def found(self, word: str) -> list[str]:
        return [hit["path"] for hit in self.tool("search_vault", query=word, mode="keyword", limit=3)["results"]]


@contextmanager
def serving(tmp_path: Path, *flags: str, env: dict | None = None, port_flag: bool = True):
    """Step 10's server over HTTP with these flags and extra environment; stopped as
    Ctrl-C or a service manager stops it (SIGTERM) when the block ends."""
    log_path = tmp_path / f"server-{time.monotonic_ns()}.log"
    command = [sys.executable, str(STEP.server), *(["--port", "0"] if port_flag else []), *flags]
    environment = quiet_environment(str(tmp_path / "default-index")) | {"OLLAMA_HOST": NO_OLLAMA} | (env or {})
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=environment)
    try:
        yield Running(process, wait_for_url(process, log_path, TIMEOUT), log_path)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def vault(tmp_path):
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    for file in vault.rglob("*"):  # as if the last edits were a while ago: their times are trusted
        os.utime(file, ns=(A_MINUTE_AGO, A_MINUTE_AGO))
    return vault


def built(tmp_path, vault, *flags, env=None) -> int:
    """Start once, let the index be built, stop; the number of notes indexed."""
    with serving(tmp_path, "--vault", str(vault), "--index-dir", str(tmp_path / "index"), *flags, env=env) as server:
        server.wait_until_searchable()
        return int(server.wait_for_log(r"indexed (\d+) notes").group(1))


def test_edits_made_while_stopped_show_after_a_restart_and_are_counted(tmp_path, vault):
    notes = built(tmp_path, vault)
    edited = vault / "Ferments" / "Kimchi.md"
    edited.write_text(edited.read_text() + "\nAdd a spoonful of zyxwvutberry.\n")
    (vault / "Bread" / "Quokka loaf.md").write_text("# Quokka loaf\n\nA loaf of qwertyflour.\n")
    (vault / "Ferments" / "Kombucha.md").unlink()
    touched = vault / "Bread" / "Focaccia.md"
    os.utime(touched, ns=(A_MINUTE_AGO + 10**9, A_MINUTE_AGO + 10**9))  # a new time, the same bytes
    (vault / "Ferments" / "Sauerkraut.md").rename(vault / "Ferments" / "Sour cabbage.md")

    with serving(tmp_path, "--vault", str(vault), "--index-dir", str(tmp_path / "index")) as server:
        new, changed, removed, unchanged, touched_but_equal = server.report()
        assert (new, changed, removed, touched_but_equal) == (2, 1, 2, 1)  # added and renamed to; gone and renamed from
        assert unchanged == notes - 3  # all but the edited one and the two gone; the touched one among them
        assert server.found("zyxwvutberry") == ["Ferments/Kimchi.md"]
        assert server.found("qwertyflour") == ["Bread/Quokka loaf.md"]
        assert not any(path == "Ferments/Kombucha.md" for path in server.found("kombucha"))
        assert "Ferments/Sour cabbage.md" in server.found("sauerkraut")


class KillingOllama(StandInOllama):
    """A stand-in for Ollama that kills the server (SIGKILL: no clean-up at all) when it
    is asked for its kill_at-th document embedding, and answers every other request."""

    def __init__(self):
        super().__init__()
        self.victim, self.kill_at, self.answered = None, None, 0

    def answer(self, path, body):
        if path == "/api/embed" and str((body or {}).get("input", [""])[0]).startswith("search_document"):
            if self.kill_at is not None and self.answered + 1 == self.kill_at:
                self.victim.send_signal(signal.SIGKILL)
                self.victim.wait()
                return 500, {"error": "the server is gone"}
            self.answered += 1
        return super().answer(path, body)

    def start_to_be_killed(self, tmp_path: Path, vault: Path, *flags: str) -> None:
        """Start step 10 on the vault, with this stand-in as Ollama, and wait until it is killed."""
        log_path = tmp_path / "killed.log"
        command = [sys.executable, str(STEP.server), "--port", "0", "--vault", str(vault),
                   "--index-dir", str(tmp_path / "index"), *flags]
        with open(log_path, "w") as log:
            self.victim = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                           env=quiet_environment(str(tmp_path / "unused")) | {"OLLAMA_HOST": self.url})
        self.victim.wait(timeout=TIMEOUT)
        assert self.victim.returncode == -signal.SIGKILL, log_path.read_text()


def test_a_reconcile_killed_part_way_resumes_where_it_stopped(tmp_path, vault):
    with KillingOllama() as ollama:
        flags = ("--embedder", "ollama")  # the flag wins over the hash embedder in quiet_environment
        env = {"OLLAMA_HOST": ollama.url}
        built(tmp_path, vault, *flags, env=env)
        edited = sorted((vault / "Bread").glob("*.md"))[:8]
        in_an_hour = time.time_ns() + 3600 * 10**9  # too recent to trust however slowly the server starts
        for number, note in enumerate(edited):
            note.write_text(note.read_text() + f"\nEdited while stopped: marker{number}word, see [[Glossary]].\n")
            os.utime(note, ns=(in_an_hour, in_an_hour))

        ollama.answered, ollama.kill_at = 0, 4  # three notes embedded, then the process dies
        ollama.start_to_be_killed(tmp_path, vault, *flags)
        done_before = ollama.answered
        assert done_before == 3

        ollama.answered, ollama.kill_at = 0, None
        with serving(tmp_path, "--vault", str(vault), "--index-dir", str(tmp_path / "index"), *flags,
                     env=env) as server:
            new, changed, removed, _, touched = server.report()
            # Only what the killed start had not done is embedded; what it did is read once
            # more (its times were too recent to trust) and found equal.
            assert (new, changed, removed) == (0, len(edited) - done_before, 0)
            assert touched == done_before
            assert ollama.answered == len(edited) - done_before
            for number, note in enumerate(edited):
                assert server.found(f"marker{number}word") == [f"Bread/{note.name}"]
            linking = {link["path"] for link in server.tool("get_backlinks", path="Glossary.md")["backlinks"]}
            assert {f"Bread/{note.name}" for note in edited} <= linking  # the links stored with each note


def test_a_first_build_killed_part_way_goes_on_at_the_next_start_and_then_reads_no_more(tmp_path, vault):
    with KillingOllama() as ollama:
        flags = ("--embedder", "ollama")
        env = {"OLLAMA_HOST": ollama.url}
        ollama.kill_at = 2  # one batch of notes written, then the process dies
        ollama.start_to_be_killed(tmp_path, vault, *flags)

        ollama.kill_at = None
        index = ("--vault", str(vault), "--index-dir", str(tmp_path / "index"), *flags)
        with serving(tmp_path, *index, env=env) as server:  # the notes done are kept, the rest added
            new, changed, removed, unchanged, _ = server.report()
            assert 0 < new and 0 < unchanged and changed == removed == 0
            assert "going on with a first build" in server.log() and "is whole now" in server.log()
        notes = new + unchanged
        with serving(tmp_path, *index, env=env) as server:
            assert server.report() == (0, 0, 0, notes, 0)  # not one note read again, links included
            assert f"links: {notes} notes loaded with the index" in server.log()
            assert "Home.md" in {link["path"] for link in server.tool("get_backlinks", path="Glossary.md")["backlinks"]}


def test_options_come_from_the_environment_and_flags_win(tmp_path, vault):
    env = {"VAULT_MCP_VAULT": str(vault), "VAULT_MCP_PORT": "0", "VAULT_MCP_INBOX": "From env",
           "VAULT_MCP_INDEX_DIR": str(tmp_path / "env-index")}
    with serving(tmp_path, env=env, port_flag=False) as server:  # no flag at all
        assert "From env/" in server.tool("create_note", title="One", content="x")["path"]
        assert str(vault) in server.log() and str(tmp_path / "env-index") in server.log()
    with serving(tmp_path, "--inbox", "From flag", env=env, port_flag=False) as server:
        assert server.tool("create_note", title="Two", content="x")["path"].startswith("From flag/")


def test_a_wrong_value_in_the_environment_stops_the_server_with_one_line(tmp_path):
    finished = subprocess.run([sys.executable, str(STEP.server)], capture_output=True, text=True, timeout=TIMEOUT,
                              env=os.environ | {"VAULT_MCP_PORT": "eighty"})
    assert finished.returncode != 0
    assert finished.stderr.strip().splitlines() == [finished.stderr.strip()]
    assert "VAULT_MCP_PORT" in finished.stderr


def test_help_names_the_variable_of_every_option_and_version_says_what_it_is():
    help_text = subprocess.run([sys.executable, str(STEP.server), "--help"], capture_output=True, text=True,
                               timeout=TIMEOUT, check=True).stdout
    flags = set(re.findall(r"--([a-z][a-z-]+)", help_text)) - {"help", "version", "stdio", "reindex"}
    assert {"vault", "port", "host", "embedder", "model", "index-dir", "inbox", "watch-interval", "debounce",
            "max-connections", "request-timeout", "max-sessions", "session-timeout"} <= flags
    for flag in flags:
        assert f"VAULT_MCP_{flag.upper().replace('-', '_')}" in help_text, flag
    version = subprocess.run([sys.executable, str(STEP.server), "--version"], capture_output=True, text=True,
                             timeout=TIMEOUT, check=True).stdout
    assert re.fullmatch(r"vault-mcp \d+\.\d+\.\d+\n", version), version


def test_an_old_python_is_told_so_in_one_line():
    """Run server.py's own code as Python 3.10 would see it at its first check."""
    pretend = ("import sys; sys.version_info = (3, 10, 0); path = sys.argv[1]; "
               "exec(compile(open(path).read(), path, 'exec'), {'__name__': '__main__'})")
    finished = subprocess.run([sys.executable, "-c", pretend, str(STEP.server)], capture_output=True, text=True,
                              timeout=TIMEOUT)
    assert finished.returncode == 1 and finished.stdout == ""
    assert finished.stderr.count("\n") == 1 and "Python 3.11 or newer" in finished.stderr, finished.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_run_starts_step_10_without_ollama_and_writes_nothing_into_the_repository(tmp_path):
    before = repository_files()
    log_path = tmp_path / "make-run.log"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("VAULT_MCP_")}
    environment |= {"OLLAMA_HOST": NO_OLLAMA, "XDG_CACHE_HOME": str(tmp_path / "cache"), "MAKEFLAGS": ""}
    with open(log_path, "w") as log:
        make = subprocess.Popen(["make", "--no-print-directory", "run", "PORT=0"], cwd=ROOT, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, env=environment, start_new_session=True)
    try:
        server = McpClient(wait_for_url(make, log_path, TIMEOUT))
        session = server.open_session()
        found = server.send(session, rpc("tools/call", name="search_vault", arguments={"query": "sourdough"})).json()
        assert found["result"]["structuredContent"]["results"], found
        text = log_path.read_text()
        assert STEP.folder in text and "offline static table" in text, text
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=10)
    assert list((tmp_path / "cache" / "vault-mcp").iterdir()), "the index is in the cache folder"
    assert repository_files() == before
    assert (ROOT / "steps" / "scratch" / "vaults" / STEP.folder / "Home.md").is_file()  # the copy make run serves


def repository_files() -> list[Path]:
    """The files of steps/, but for caches and the ignored scratch folder, which is the reader's."""
    steps = ROOT / "steps"
    return sorted(path for path in steps.rglob("*")
                  if "__pycache__" not in path.parts and not path.is_relative_to(steps / "scratch"))
