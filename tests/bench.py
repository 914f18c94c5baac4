"""make bench: tools/call throughput and latency, step 3 beside the official MCP Python SDK.

A benchmark, not a test. It starts step 3 and two minimal SDK servers
(tests/bench_sdk_server.py: JSON responses, and the SDK's default SSE responses) on
free ports, then drives each with the same load generator: 1 and then 8 clients,
each calling the echo tool as fast as the answers come back. Every answer is
checked; wrong ones are counted and shown. BENCH_SECONDS=N sets the measured time
per configuration (default 5), after a warm-up that is not measured.

Runs in .venv-interop (made by `make bench`), where the SDK is installed; step 3
runs in the same interpreter, as it needs the standard library only.
"""
import http.client
import json
import multiprocessing
import os
import platform
import signal
import statistics
import sys
import time
from contextlib import ExitStack
from importlib.metadata import version
from pathlib import Path
from threading import BrokenBarrierError
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "steps"))
from launch import running_server  # noqa: E402
from manifest import find_step  # noqa: E402

SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
WARMUP = 1.0
CLIENTS = (1, 8)
PROTOCOL_VERSION = "2025-11-25"  # both servers speak the handshake era, with sessions

# Matching configurations side by side: (label, server, send a progressToken, expected Content-Type).
# A progressToken makes step 3 answer with an SSE stream; the SDK streams by default and gets the same request.
PAIRS = [
    (("ours JSON", "ours", False, "application/json"),
     ("SDK  JSON (json_response=True)", "sdk-json", False, "application/json")),
    (("ours SSE (progressToken)", "ours", True, "text/event-stream"),
     ("SDK  SSE (default)", "sdk-sse", True, "text/event-stream")),
]


class Client:
    """One MCP client on one keep-alive connection. When the server closes the
    connection after an answer (HTTP/1.0 does), http.client opens a new one for the
    next request, inside that request's timing; `connects` counts them."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        self.path, self.connects = parts.path, 0
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(self, message: dict) -> tuple[int, str, list[dict], http.client.HTTPResponse]:
        """Send one message; return the status, Content-Type, the JSON-RPC messages received and the response."""
        reused = self.connection.sock is not None
        self.connects += not reused
        try:
            self.connection.request("POST", self.path, json.dumps(message), self.headers)
            response = self.connection.getresponse()
            body = response.read().decode().replace("\r\n", "\n")
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.connection.close()
            if not reused:
                raise
            return self.post(message)  # the server had closed the idle connection: once more on a new one
        content_type = response.getheader("Content-Type", "").split(";")[0]
        if content_type == "text/event-stream":  # events are separated by a blank line
            events = ["\n".join(line[5:].strip() for line in event.splitlines() if line.startswith("data:"))
                      for event in body.split("\n\n")]
            messages = [json.loads(data) for data in events if data]
        else:
            messages = [json.loads(body)] if body else []
        return response.status, content_type, messages, response

    def start_session(self):
        """The handshake: initialize, keep Mcp-Session-Id if the server gives one, then notifications/initialized."""
        info = {"name": "bench", "version": "1"}
        params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": info}
        status, _, messages, response = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        if status != 200 or messages[-1].get("result", {}).get("protocolVersion") != PROTOCOL_VERSION:
            raise RuntimeError(f"initialize failed: {status} {messages}")
        self.headers["MCP-Protocol-Version"] = PROTOCOL_VERSION
        if response.getheader("Mcp-Session-Id"):  # a server may also run without sessions
            self.headers["Mcp-Session-Id"] = response.getheader("Mcp-Session-Id")
        status, *_ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status != 202:
            raise RuntimeError(f"notifications/initialized answered {status}, not 202")

    def end_session(self):
        """DELETE ends the session, so that sessions do not pile up in the server between runs."""
        if "Mcp-Session-Id" in self.headers:
            self.connection.request("DELETE", self.path, headers=self.headers)
            self.connection.getresponse().read()

    def echo(self, n: int, progress: bool, content_type: str) -> str | None:
        """Call echo once; None if the answer is right, else what is wrong with it."""
        text = f"echo {n}"
        params = {"name": "echo", "arguments": {"text": text}}
        if progress:
            params["_meta"] = {"progressToken": n}
        status, got_type, messages, _ = self.post({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
        answer = next((m for m in messages if m.get("id") == n), {})
        result = answer.get("result", {})
        if status != 200 or got_type != content_type:
            return f"status {status}, Content-Type {got_type!r}: {messages}"
        if result.get("content") != [{"type": "text", "text": text}] or result.get("isError"):
            return f"wrong answer: {messages}"
        return None


def client_process(url: str, progress: bool, content_type: str, barrier, results):
    """One client: set up and check one call, wait for the others, warm up, then measure."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # on Ctrl-C the parent stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        client = Client(url)
        client.start_session()
        problem = client.echo(1, progress, content_type)
        if problem:
            raise RuntimeError(f"the first echo is wrong: {problem}")
        barrier.wait(timeout=60)
    except BrokenBarrierError:
        return results.put({"failed": "another client failed to start"})
    except Exception as error:
        barrier.abort()
        return results.put({"failed": f"{type(error).__name__}: {error}"})
    start = time.monotonic() + WARMUP
    end = start + SECONDS
    latencies, errors, first_error, connects, cpu = [], 0, None, 0, 0.0
    n = 2
    while (sent := time.monotonic()) < end:
        if sent >= start and not latencies:  # the first measured request: start counting
            connects, cpu = client.connects, time.process_time()
        try:
            problem = client.echo(n, progress, content_type)
        except (OSError, http.client.HTTPException, ValueError) as error:
            problem = f"{type(error).__name__}: {error}"
            client.connection.close()
        if sent >= start:
            latencies.append(time.monotonic() - sent)
            errors += problem is not None
            first_error = first_error or problem
        n += 1
    cpu = time.process_time() - cpu
    try:
        client.end_session()
    except (OSError, http.client.HTTPException):
        pass  # not measured, and the server forgets the session when it stops anyway
    results.put({"latencies": latencies, "errors": errors, "first_error": first_error,
                 "connects": client.connects - connects, "cpu": cpu})


def measure(url: str, progress: bool, content_type: str, clients: int) -> dict:
    """Run `clients` client processes against url at once; merge what they measured."""
    barrier, results = multiprocessing.Barrier(clients), multiprocessing.Queue()
    args = (url, progress, content_type, barrier, results)
    processes = [multiprocessing.Process(target=client_process, args=args, daemon=True) for _ in range(clients)]
    for process in processes:
        process.start()
    try:
        outcomes = [results.get(timeout=WARMUP + SECONDS + 90) for _ in processes]
    except BaseException:  # Ctrl-C, or a client that never reported
        for process in processes:
            process.terminate()
        raise
    for process in processes:
        process.join()
    failed = [o["failed"] for o in outcomes if "failed" in o]
    if failed:
        return {"failed": failed[0]}
    if not all(o["latencies"] for o in outcomes):
        return {"failed": "a client had no answer in the measured time"}
    latencies = sorted(ms for o in outcomes for ms in (s * 1000 for s in o["latencies"]))
    errors = sum(o["errors"] for o in outcomes)
    return {
        "rate": (len(latencies) - errors) / SECONDS,
        "p50": statistics.median(latencies),
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "connects": sum(o["connects"] for o in outcomes),
        "cpu": sum(o["cpu"] for o in outcomes) / SECONDS * 100,
        "errors": errors,
        "first_error": next((o["first_error"] for o in outcomes if o["first_error"]), None),
    }


def row(label: str, clients: int, m: dict, ratio: str = "") -> str:
    if "failed" in m:
        return f"{label:32} {clients:>7}   FAILED: {m['failed']}"
    flag = f"  <- {m['errors']} ERRORS" if m["errors"] else ""
    return (f"{label:32} {clients:>7} {m['rate']:>8.0f} {m['p50']:>7.2f} {m['p99']:>7.2f} "
            f"{m['connects']:>7} {m['cpu']:>6.0f}% {m['errors']:>6} {ratio:>8}{flag}")


def main() -> int:
    began = time.monotonic()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench: terminated"))  # still stop the servers
    print(f"make bench: tools/call echo, step 3 against the official MCP Python SDK {version('mcp')}")
    print(f"machine:  {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.system()} {platform.machine()}, load average {os.getloadavg()[0]:.1f} before the run")
    print(f"run:      {len(PAIRS) * 2} configurations x {len(CLIENTS)} client counts, each measured for {SECONDS:g} s "
          f"after {WARMUP:g} s of warm-up (BENCH_SECONDS=)")
    print("load:     closed loop on 127.0.0.1: each client is a process of its own with one keep-alive")
    print("          http.client connection, sending its next request when the answer is in. A connection")
    print("          the server closes is reopened inside the next request's latency. Clients and servers")
    print("          share the machine's cores. Each client does the 2025-11-25 handshake and checks one")
    print("          echo before timing; every timed answer is checked too (status, Content-Type, text).")
    print()
    sdk_server = HERE / "bench_sdk_server.py"
    failures = 0
    with ExitStack() as servers:
        urls = {
            "ours": servers.enter_context(running_server(find_step(3).server))[0],
            "sdk-json": servers.enter_context(running_server(sdk_server, "--json"))[0],
            "sdk-sse": servers.enter_context(running_server(sdk_server))[0],
        }
        print(f"{'configuration':32} {'clients':>7} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
              f"{'conns':>7} {'gen CPU':>7} {'errors':>6} {'ours/SDK':>8}")
        for clients in CLIENTS:
            for ours, sdk in PAIRS:
                measured = [measure(urls[server], progress, content_type, clients)
                            for _, server, progress, content_type in (ours, sdk)]
                ok = all("failed" not in m and not m["errors"] for m in measured)
                ratio = f"{measured[0]['rate'] / measured[1]['rate']:.2f}x" if ok else "n/a"
                print(row(ours[0], clients, measured[0], ratio), flush=True)
                print(row(sdk[0], clients, measured[1]), flush=True)
                for m in measured:
                    failures += "failed" in m or m["errors"] > 0
                    if m.get("first_error"):
                        print(f"    first error: {m['first_error'][:200]}")
    print()
    print("conns: TCP connections opened while measuring: 0 when kept alive, one per request when the server")
    print("       closes each connection after its answer (HTTP/1.0).")
    print("req/s: correct answers per second. gen CPU: what the load generator used, in % of one core.")
    print("ours/SDK: throughput ratio of the matching configurations (above 1: ours answers more).")
    verdict = f"{failures} configurations had errors" if failures else "no errors"
    print(f"total: {time.monotonic() - began:.0f} s, {verdict}. Load average {os.getloadavg()[0]:.1f} at the end:")
    print("       other work on the machine takes cores from both sides; run again when the numbers disagree.")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the servers and clients are stopped by now
        sys.exit("bench: interrupted")
