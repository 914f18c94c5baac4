"""python3 tests/bench_vault.py: the finished server (step 10) on a vault of 10,000 notes. A benchmark, not a test.

It writes a generated vault (generated_vault.py: frontmatter, headings, links, tags,
seeded) to a temporary folder and drives step 10's server as a process over stdio,
with the offline static embedder, as a desktop client would:

- first build: the server starts on a vault it has no index of; the rate is notes
  per second from the process's start to its "indexed" line, so it counts reading,
  parsing and writing as well as embedding; the progress line's own figure beside it;
- restart, nothing changed, to the first search answered, and (another restart) to
  the first backlinks answered: from the process's start, a request sent at once
  and sent again while the answer is "not ready";
- reconcile with nothing changed: reconcile() timed in a fresh Python beside the server,
  apart from the load it starts with (the restart figures count that);
- resident memory of the server process: its peak (VmHWM) and what it holds (VmRSS),
  from /proc, after the build and after a restart.

BENCH_VAULT_NOTES=n for another size (the targets are for 10,000).
BENCH_VAULT_FROM=folder builds the vault from a real one instead: its notes copied
into "Copy 1/", "Copy 2/", ... until there are BENCH_VAULT_NOTES (Obsidian's help
vault, `en/` of obsidianmd/obsidian-help, copied 58 times is 10,034 notes). With
BENCH_OLLAMA=host:port (e.g. 127.0.0.1:11500), it also builds BENCH_OLLAMA_NOTES
notes (default 500) with Ollama there, and embeds the same chunks with the embedder
alone in batches, to show what indexing adds to the embedding.
"""
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEP = HERE.parent / "steps" / "10-reconcile-and-ship"
sys.path.insert(0, str(HERE))
from generated_vault import make_vault  # noqa: E402

NOTES = int(os.environ.get("BENCH_VAULT_NOTES", "10000"))
COPY_FROM = os.environ.get("BENCH_VAULT_FROM", "")
OLLAMA = os.environ.get("BENCH_OLLAMA", "")
OLLAMA_NOTES = int(os.environ.get("BENCH_OLLAMA_NOTES", "500"))
TARGET_BUILD_RATE, TARGET_RESTART_S, TARGET_RECONCILE_S, TARGET_MEMORY_MB = 300, 2.0, 1.0, 250
GIVE_UP_S = 900  # a build of 10,000 notes at 20 notes/s


class Server:
    """Step 10 over stdio, with every line of its log kept with the moment it arrived."""

    def __init__(self, vault: Path, index_dir: Path, embedder: str = "static", env: dict | None = None):
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, str(STEP / "server.py"), "--stdio", "--vault", str(vault), "--index-dir", str(index_dir),
             "--embedder", embedder, "--log-level", "info", "--watch-interval", "3600"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.answers, self.log = queue.Queue(), queue.Queue()
        threading.Thread(target=self._read, args=(self.process.stdout, self.answers), daemon=True).start()
        threading.Thread(target=self._read, args=(self.process.stderr, self.log), daemon=True).start()
        self.next_id = 0
        self.call("initialize", protocolVersion="2025-11-25", capabilities={},
                  clientInfo={"name": "bench", "version": "1"})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    @staticmethod
    def _read(stream, lines: queue.Queue) -> None:
        for line in stream:
            lines.put((time.monotonic(), line.decode("utf-8", "replace")))

    def _send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + GIVE_UP_S
        while time.monotonic() < deadline:
            _, line = self.answers.get(timeout=GIVE_UP_S)
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message
        raise TimeoutError(f"no answer to {method}")

    def seconds_to_answer(self, tool: str, arguments: dict) -> float:
        """Seconds from the process's start until `tool` gives an answer that is not an error."""
        deadline = time.monotonic() + GIVE_UP_S
        while time.monotonic() < deadline:
            result = self.call("tools/call", name=tool, arguments=arguments)["result"]
            if not result.get("isError"):
                return time.monotonic() - self.started
            time.sleep(0.05)
        raise TimeoutError(f"{tool} never answered")

    def wait_for_log(self, words: str) -> tuple[float, str]:
        """(seconds since the start, the line) of the first log line holding `words`."""
        deadline = time.monotonic() + GIVE_UP_S
        while time.monotonic() < deadline:
            moment, line = self.log.get(timeout=GIVE_UP_S)
            if words in line:
                return moment - self.started, line.strip()
        raise TimeoutError(f"the log never said {words!r}")

    def memory_mb(self) -> tuple[float, float]:
        """(peak, now) resident memory of the server process, in MB (Linux's /proc)."""
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines())
        return tuple(int(fields[name].split()[0]) / 1024 for name in ("VmHWM", "VmRSS"))

    def cpu_seconds(self) -> tuple[float, float]:
        """(the server's own, its ended workers') CPU seconds so far, from /proc: on a
        machine other work keeps busy, the wall clock says little, CPU time more."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rpartition(")")[2].split()
        ticks = os.sysconf("SC_CLK_TCK")
        utime, stime, cutime, cstime = (int(fields[index]) / ticks for index in (11, 12, 13, 14))
        return utime + stime, cutime + cstime

    def stop(self) -> None:
        self.process.stdin.close()  # end of input: the server stops as a client's would make it
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def reconcile_seconds(vault: Path, index_dir: Path) -> tuple[float, float, str]:
    """reconcile() with nothing changed, timed in a fresh Python: (the load of the stored
    index and link graph, the reconcile after it, its report). The server answers once
    the load is done (the restart figures count it); reconcile runs behind the answers."""
    code = (f"import sys, time; sys.path.insert(0, {str(STEP)!r})\n"
            "from static_embedder import StaticEmbedder; from vault import Vault\n"
            "from vault_index import VaultIndex; from reconcile import reconcile\n"
            "from index import open_embedder_folder; embedder = StaticEmbedder()\n"
            f"v = VaultIndex(Vault({str(vault)!r}), embedder, open_embedder_folder({str(index_dir)!r}, embedder.name))\n"
            "load, loaded = v.load_stored, []\n"
            "def timed():\n"
            "    started = time.perf_counter(); stored = load(); loaded.append(time.perf_counter() - started)\n"
            "    return stored\n"
            "v.load_stored = timed\n"
            "started = time.perf_counter(); report = reconcile(v)\n"
            "print(loaded[0], time.perf_counter() - started - loaded[0], report)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=GIVE_UP_S)
    load_s, reconcile_s, report = run.stdout.split(" ", 2)
    return float(load_s), float(reconcile_s), report.strip()


def copy_vault(source: Path, folder: Path, notes: int) -> list[str]:
    """The notes of `source` copied whole into numbered folders until there are `notes`."""
    originals = sorted(path.relative_to(source) for path in source.rglob("*.md")
                       if not any(part.startswith(".") for part in path.relative_to(source).parts))
    if not originals:
        raise SystemExit(f"BENCH_VAULT_FROM={source}: no notes there")
    paths = []
    while len(paths) < notes:
        copy = f"Copy {len(paths) // len(originals) + 1}"
        for original in originals[: notes - len(paths)]:
            target = folder / copy / original
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((source / original).read_bytes())
            paths.append(f"{copy}/{original.as_posix()}")
    return paths


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def bench_offline(vault: Path, paths: list[str], folder: Path) -> None:
    index_dir = folder / "index"
    server = Server(vault, index_dir)
    server.wait_for_log("indexing: ")  # the build is under way
    asked = time.monotonic()
    during = server.call("tools/call", name="search_vault", arguments={"query": "river town history"})["result"]
    during_s, partial = time.monotonic() - asked, during.get("structuredContent", {})
    built_at, line = server.wait_for_log("indexed ")
    rate = NOTES / built_at
    server.seconds_to_answer("search_vault", {"query": "river town history"})
    peak, now = server.memory_mb()
    own, workers = server.cpu_seconds()
    server.stop()
    cores = len(os.sched_getaffinity(0))
    idle_rate = NOTES / max(own, (own + workers) / cores)
    print(f"first build: {built_at:.1f} s from the start, {rate:.0f} notes/s (the progress line: {line.split('] ')[-1]})")
    print(f"  CPU: the server {own:.1f} s, its workers {workers:.1f} s: on {cores} idle cores, about "
          f"{idle_rate:.0f} notes/s from the start")
    print(f"  memory after the build: peak {peak:.0f} MB, resident {now:.0f} MB")
    print(f"  a search sent during the build: answered in {during_s:.2f} s, from {partial.get('indexed')} of "
          f"{partial.get('total')} notes (target <= 1 s: {verdict(during_s <= 1.0)})")

    server = Server(vault, index_dir)
    to_search = server.seconds_to_answer("search_vault", {"query": "river town history"})
    postings = server.wait_for_log("keyword postings")[1].rpartition("keyword postings ")[2]
    server.seconds_to_answer("search_vault", {"query": "election results"})  # the keyword postings are ready
    restart_peak, restart_now = server.memory_mb()
    server.stop()
    server = Server(vault, index_dir)
    to_backlinks = server.seconds_to_answer("get_backlinks", {"path": paths[1]})
    server.stop()
    load_s, reconcile_s, report = reconcile_seconds(vault, index_dir)
    print(f"restart: first search answered after {to_search:.2f} s (keyword postings {postings}); "
          f"first backlinks after {to_backlinks:.2f} s")
    print(f"  memory after a restart and two searches: peak {restart_peak:.0f} MB, resident {restart_now:.0f} MB")
    print(f"reconcile, nothing changed: {reconcile_s:.2f} s after the load of the index and links "
          f"({load_s:.2f} s) ({report})")
    print()
    worst = max(peak, restart_peak)
    print(f"target first build >= {TARGET_BUILD_RATE} notes/s: {rate:.0f}: {verdict(rate >= TARGET_BUILD_RATE)}")
    print(f"target restart to first search <= {TARGET_RESTART_S:g} s: {to_search:.2f} s: "
          f"{verdict(to_search <= TARGET_RESTART_S)} (backlinks: {to_backlinks:.2f} s)")
    print(f"target reconcile, nothing changed <= {TARGET_RECONCILE_S:g} s: {reconcile_s:.2f} s: "
          f"{verdict(reconcile_s <= TARGET_RECONCILE_S)}")
    print(f"target memory <= {TARGET_MEMORY_MB} MB: peak {worst:.0f} MB: {verdict(worst <= TARGET_MEMORY_MB)}")


def bench_ollama(folder: Path) -> None:
    """A build with Ollama beside the embedding of the same chunks alone: what indexing adds."""
    sys.path.insert(0, str(STEP))
    from ollama_client import OllamaEmbedder
    from vault import Vault
    from vault_index import VaultIndex

    vault = folder / "ollama-vault"
    make_vault(vault, OLLAMA_NOTES, seed=18)
    env = dict(os.environ, OLLAMA_HOST=f"http://{OLLAMA}")
    server = Server(vault, folder / "ollama-index", "ollama", env)
    built_at, _ = server.wait_for_log("indexed ")
    server.stop()
    embedder = OllamaEmbedder(f"http://{OLLAMA}")
    reader = VaultIndex(Vault(vault), embedder, folder / "unused")
    texts = [chunk.text for path in reader.vault.list_notes() for chunk in reader.read_parts(path)[0]]
    started = time.monotonic()
    for start in range(0, len(texts), 32):
        embedder.embed_documents(texts[start:start + 32])
    alone = time.monotonic() - started
    print(f"with Ollama at {OLLAMA}, {OLLAMA_NOTES} notes, {len(texts)} chunks: the server's first build "
          f"{built_at:.1f} s ({OLLAMA_NOTES / built_at:.1f} notes/s); the same chunks embedded alone "
          f"{alone:.1f} s ({len(texts) / alone:.0f} chunks/s): indexing adds {100 * (built_at / alone - 1):.0f}%")


def main() -> int:
    began = time.monotonic()
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    kind = f"copies of {COPY_FROM}" if COPY_FROM else "a generated vault"
    print(f"step 10 on {kind}, {NOTES} notes; {os.cpu_count()} CPUs, load average {load}")
    with tempfile.TemporaryDirectory(prefix="bench-vault-") as name:
        folder = Path(name)
        vault = folder / "vault"
        paths = copy_vault(Path(COPY_FROM), vault, NOTES) if COPY_FROM else make_vault(vault, NOTES)
        size = sum(file.stat().st_size for file in vault.rglob("*.md"))
        print(f"wrote {NOTES} notes, {size / 1e6:.0f} MB, a mean of {size / NOTES / 1000:.1f} KB "
              f"(not measured: {time.monotonic() - began:.0f} s)")
        bench_offline(vault, paths, folder)
        if OLLAMA:
            bench_ollama(folder)
    print(f"(the benchmark took {time.monotonic() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
