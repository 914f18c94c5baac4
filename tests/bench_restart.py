"""A restart on a vault of 10,000 notes: how soon step 10 answers, and what reconcile costs.

A benchmark, not a test. It writes a vault of generated notes with real structure
(frontmatter with tags and aliases, headings, links between notes, a few KB each),
builds step 10's index of it once (offline: the static embedder, or BENCH_EMBEDDER), then, with nothing
changed:
- starts the server and times, from the start of the process, the first search
  answered and the first get_backlinks answered, and reads its resident memory;
- in this process, times loading the stored index and link graph, then the
  reconcile that follows (a stat per note), and, beside them, reading every note
  for its links as a restart did before the links were stored.

    python3 tests/bench_restart.py [NOTES] [--keep FOLDER]

Targets: restart to first search at most 2 s; reconcile with nothing changed at most 1 s.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "steps"))
sys.path.insert(0, str(HERE))
from launch import quiet_environment, wait_for_url  # noqa: E402
from manifest import find_step  # noqa: E402
from helpers import step_modules  # noqa: E402

STEP = find_step(10)
WORDS = ("crumb dough starter levain flour water salt yeast proof bake oven crust rye wheat spelt koji miso "
         "brine cabbage pepper garlic jar lid weight airlock sour tang acid heat time rest fold shape score "
         "steam tray scale gram ratio note plan log batch test taste smell colour bubble rise fall").split()
TIMEOUT = 120.0
EMBEDDER = os.environ.get("BENCH_EMBEDDER", "static")  # offline, as a reader without Ollama has it


def make_vault(root: Path, notes: int, seed: int = 17) -> Path:
    """`notes` notes in 50 folders, each a few KB: frontmatter, headings, links, tags."""
    rng = random.Random(seed)
    names = [f"Folder {number % 50:02d}/Note {number:05d}" for number in range(notes)]
    for number, name in enumerate(names):
        file = root / f"{name}.md"
        file.parent.mkdir(parents=True, exist_ok=True)
        lines = ["---", f"tags: [topic/{rng.choice(WORDS)}, {rng.choice(WORDS)}]",
                 f"aliases: [Alias {number}]", "---", f"# Note {number}", ""]
        for section in range(rng.randint(3, 6)):
            lines += [f"## Section {section} {rng.choice(WORDS)}", ""]
            for _ in range(rng.randint(2, 4)):
                sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 60)))
                link = rng.choice(names).rpartition("/")[2]
                lines += [f"{sentence.capitalize()}, see [[{link}]] #{rng.choice(WORDS)}.", ""]
        file.write_text("\n".join(lines))
    old = time.time_ns() - 3600 * 10**9  # an hour ago: every stamp is trusted
    for file in root.rglob("*.md"):
        os.utime(file, ns=(old, old))
    return root


def build(vault: Path, index_dir: Path) -> float:
    with step_modules(STEP.path):
        from embeddings import make_embedder
        from index import open_embedder_folder
        from vault import Vault
        from vault_index import VaultIndex

        embedder, _ = make_embedder(EMBEDDER)
        started = time.perf_counter()
        VaultIndex(Vault(vault), embedder, open_embedder_folder(index_dir, embedder.name)).rebuild()
        return time.perf_counter() - started


def call(url: str, session: str, name: str, arguments: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return json.loads(response.read())["result"]


def open_session(url: str) -> str:
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        session = response.headers["Mcp-Session-Id"]
    notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    urllib.request.urlopen(urllib.request.Request(url, json.dumps(notified).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}), timeout=TIMEOUT).close()
    return session


def until_answered(url: str, session: str, name: str, arguments: dict, since: float) -> tuple[float, dict]:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        result = call(url, session, name, arguments)
        if not result["isError"]:
            return time.perf_counter() - since, result["structuredContent"]
        time.sleep(0.01)
    raise SystemExit(f"{name} never answered")


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def restart(vault: Path, index_dir: Path, log_path: Path) -> None:
    command = [sys.executable, str(STEP.server), "--port", "0", "--vault", str(vault), "--index-dir", str(index_dir)]
    started = time.perf_counter()
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=quiet_environment(str(index_dir), EMBEDDER) | {"VAULT_MCP_WATCH_INTERVAL": "60"})
    try:
        url = wait_for_url(process, log_path, TIMEOUT)
        session = open_session(url)
        # Both asked at once, each again until it answers, so neither waits behind the other.
        with ThreadPoolExecutor(2) as pool:
            search = pool.submit(until_answered, url, session, "search_vault",
                                 {"query": "rye starter", "mode": "keyword"}, started)
            backlinks = pool.submit(until_answered, url, session, "get_backlinks",
                                    {"path": "Folder 01/Note 00001.md"}, started)
            (searched, found), (linked, backlinks) = search.result(), backlinks.result()
        print(f"restart to first search answered   {searched:6.2f} s   (target 2 s; stale {found.get('stale', 0)})")
        print(f"restart to get_backlinks answered  {linked:6.2f} s   ({len(backlinks['backlinks'])} backlinks, "
              f"stale {backlinks.get('stale', 0)})")
        deadline = time.monotonic() + TIMEOUT
        while "reconciled:" not in log_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        print(f"reconcile done after                {time.perf_counter() - started:6.2f} s   "
              f"resident memory {resident_mb(process.pid):.0f} MB")
    finally:
        process.terminate()
        process.wait(timeout=30)


def clocks() -> tuple[float, float]:
    """Wall time and this process's CPU time: on a busy machine the second says more."""
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> str:
    wall, cpu = clocks()
    return f"{wall - start[0]:6.2f} s ({cpu - start[1]:.2f} s CPU)"


def in_process(vault: Path, index_dir: Path) -> None:
    with step_modules(STEP.path):
        from embeddings import make_embedder
        from index import open_embedder_folder
        from links import LinkGraph
        from reconcile import reconcile
        from vault import Vault
        from vault_index import VaultIndex

        embedder, _ = make_embedder(EMBEDDER)
        vault_index = VaultIndex(Vault(vault), embedder, open_embedder_folder(index_dir, embedder.name))
        load_stored, loaded = vault_index.load_stored, []

        def timed_load():
            result = load_stored()
            loaded.append(clocks())
            return result

        vault_index.load_stored = timed_load
        started = clocks()
        report = reconcile(vault_index)
        reconciled = since(loaded[0])
        wall, cpu = loaded[0][0] - started[0], loaded[0][1] - started[1]
        print(f"load index and link graph           {wall:6.2f} s ({cpu:.2f} s CPU)")
        print(f"reconcile, nothing changed          {reconciled}   (target 1 s; {report})")
        started = clocks()
        vault_index.chunk_index.keywords()
        print(f"keyword postings, after the load    {since(started)}")
        started = clocks()
        LinkGraph.build(Vault(vault))
        print(f"reading every note for its links    {since(started)}   (what a restart did before)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notes", nargs="?", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="a folder for the vault and index, kept between runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        vault, index_dir = folder / "vault", folder / "index"
        if not vault.exists():
            vault.mkdir(parents=True)
            make_vault(vault, args.notes)
        if not list(index_dir.glob("*/index.json")):  # one folder per embedder
            print(f"first build of {args.notes} notes ({EMBEDDER} embedder): {build(vault, index_dir):.1f} s")
        restart(vault, index_dir, folder / "server.log")
        in_process(vault, index_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
