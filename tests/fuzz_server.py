"""Send a step's server seeded, hostile messages, and count what should never happen.

    python3 tests/fuzz_server.py [--step 10] [--count 1000] [--seed 1]

The server runs on a temporary copy of steps/sample-vault, over stdio and over
HTTP, in both eras: the handshake era (initialize, then a session) and 2026-07-28
(_meta on every request). The messages are split evenly across the four. Each is
built from a valid request to a method or a tool (the tools and their schemas
come from tools/list), then mutated: hostile ids, broken envelopes, surrogates and
NULs in strings, hostile paths and URIs, arguments of the wrong type, truncated or
invalid JSON, batches.

Counted: exits of the server, tracebacks in its log, -32603 answers, tool results
that say "failed unexpectedly", HTTP 5xx, and hangs (no answer within TIMEOUT).
One summary line goes to stdout, a few examples of each finding to stderr; the
exit status is 1 when any count is above 0. Not a pytest file: test_hostile_messages
runs it with a small count.
"""
import argparse
import base64
import http.client
import json
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "steps"))
from launch import quiet_environment, wait_for_url  # noqa: E402
from manifest import SAMPLE_VAULT, find_step  # noqa: E402

TIMEOUT = 10.0  # seconds for one message's answer; longer counts as a hang
MAX_RESTARTS = 20  # a server that keeps dying ends its lane early
STATELESS = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}}
FINDINGS = ["exits", "tracebacks", "internal errors", "unexpected tool failures", "http 5xx", "hangs"]
CLIENT_INFO = {"name": "fuzz", "version": "1"}

SHARED_METHODS = ["ping", "tools/list", *6 * ["tools/call"], "resources/list",
                  "resources/templates/list", "resources/read", "resources/read", "prompts/list", "no/such/method"]
ERA_METHODS = {"handshake": ["initialize", "resources/subscribe", "resources/unsubscribe", "logging/setLevel"],
               STATELESS: ["server/discover", "subscriptions/listen", "subscriptions/listen"]}
NOTIFICATIONS = ["notifications/initialized", "notifications/cancelled", "notifications/progress",
                 "notifications/roots/list_changed"]

HOSTILE_IDS = [[1], {"id": 1}, None, 1.5, True, False, 2**70, -(2**70), "x" * 5000, "", "\ud800", 0, -1, 1e308]
ODD_TEXT = ["\ud800", "\udfff", "\udc80", "\ud83d", "\0", "\u202e", "\ufeff", "\u0301", "\U0001F35E", "\n",
            "\r\n", "\\", '"', "%00", "%2e%2e", "\x7f", "\u2028", "\u200d", "\uffff"]
HOSTILE_PATHS = ["..", "../Home.md", "Bread/../Home.md", "/etc/passwd", "C:\\Windows\\win.ini", "C:x.md",
                 "\\\\server\\share\\x.md", "..\\..\\x.md", "%2e%2e/Home.md", ".obsidian/app.json", ".git/config",
                 "Home.md/", "Bread/", "Bread", "", " ", ".", "./Home", "a/" * 300 + "x.md", "x" * 3000,
                 "\ud800.md", "Bread/\udc80.md", "Home\0.md", "Home.md\0", "~/x.md", "CON", "NUL.md"]
HOSTILE_URIS = ["vault:///../Home.md", "vault://host/Home.md", "VAULT:///Home.md", "vault:///Home.md?x#y",
                "vault:///%ED%A0%80.md", "vault:///%2e%2e/Home.md", "vault:///%00.md", "vault:///%ZZ.md",
                "file:///etc/passwd", "vault:///", "vault:", "vault:///" + "a/" * 300 + "x.md",
                "vault:///\ud800.md", "vault:///Bread%2F..%2FHome.md", "vault:///C:/x.md", "vault:////etc/passwd",
                "vault:///.obsidian/app.json", "http://127.0.0.1/", ""]
ODD_VALUES = [None, True, False, 0, -1, 2**64, 1.5, "", "x" * 2000, [], [1], {}, {"a": {}}, ["a", None], "\ud800"]
WORDS = ["bread", "sourdough starter", "kimchi", "fermentation", "Home", "rye", "salt", "\u00e9t\u00e9", "a"]


class Messages:
    """Seeded hostile messages, built from valid ones to the server's methods and tools."""

    def __init__(self, seed: int, tools: dict, notes: list[str]):
        self.random, self.tools, self.notes = random.Random(seed), tools, notes
        self.count = 0

    def next(self, era: str) -> tuple[bytes, object]:
        """The bytes to send, and the message they hold (None when they hold no JSON value)."""
        self.count += 1
        roll = self.random.random()
        if roll < 0.05:
            message = [self.mutated(era) for _ in range(self.random.randint(0, 4))] or self.random.choice(
                [[], [1, "x"], [[]]])
        else:
            message = self.mutated(era)
        if roll > 0.9:
            return self.broken_bytes(message), None
        return json.dumps(message).encode(), message

    def mutated(self, era: str):
        message = self.valid(era)
        # Most mutations keep the envelope whole, so that most messages reach a method or a tool.
        mutations = [self.hostile_id, self.broken_envelope, self.broken_meta] + 3 * [
            self.odd_strings, self.hostile_paths, self.wrong_types]
        for mutation in self.random.sample(mutations, self.random.choice([0, 1, 1, 2, 2, 3])):
            message = mutation(message, era)
        return message

    def valid(self, era: str) -> dict:
        roll = self.random.random()
        if roll < 0.08:
            return {"jsonrpc": "2.0", "method": self.random.choice(NOTIFICATIONS), "params": {"requestId": 1}}
        if roll < 0.1:
            return {"jsonrpc": "2.0", "id": self.random.randint(0, 9), "result": {}}
        method = self.random.choice(SHARED_METHODS + ERA_METHODS[era])
        params = self.params(method)
        if era == STATELESS:
            params["_meta"] = dict(META)
        elif self.random.random() < 0.1:
            params["_meta"] = {"progressToken": self.random.choice(["p", 1, None, [1]])}
        return {"jsonrpc": "2.0", "id": self.count, "method": method, "params": params}

    def params(self, method: str) -> dict:
        pick = self.random.choice
        if method == "tools/call":
            name = pick(list(self.tools)) if self.random.random() < 0.95 else "no_such_tool"
            return {"name": name, "arguments": self.arguments(self.tools.get(name, {}))}
        if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            return {"uri": self.uri()}
        if method == "subscriptions/listen":
            return {"notifications": {"resourcesListChanged": pick([True, False]),
                                      "resourceSubscriptions": [self.uri() for _ in range(self.random.randint(0, 3))]}}
        if method == "initialize":
            return {"protocolVersion": pick(["2025-11-25", "2025-03-26", "1999-01-01"]), "capabilities": {},
                    "clientInfo": CLIENT_INFO}
        if method == "resources/list" and self.random.random() < 0.3:
            return {"cursor": pick(["", "bm9uc2Vuc2U=", "YWZ0ZXI6SG9tZS5tZA==", "\ud800"])}
        return {}

    def arguments(self, schema: dict) -> dict:
        required = set(schema.get("required", []))
        return {name: self.value(name, property_schema)
                for name, property_schema in schema.get("properties", {}).items()
                if name in required or self.random.random() < 0.5}

    def value(self, name: str, schema: dict):
        kind = schema.get("type")
        if kind == "integer":
            return self.random.randint(schema.get("minimum", 0), schema.get("maximum", 100))
        if kind == "boolean":
            return self.random.choice([True, False])
        if kind == "array":
            return [self.value(name, schema.get("items", {})) for _ in range(self.random.randint(0, 3))]
        if kind == "string" and name in ("path", "folder"):
            return self.random.choice(self.notes + ["Bread", "Inbox", "Home"])
        if kind == "string":
            return " ".join(self.random.sample(WORDS, self.random.randint(1, 3)))
        return self.random.choice(WORDS)

    def uri(self) -> str:
        note = self.random.choice(self.notes)
        if self.random.random() < 0.6:
            return "vault:///" + note.replace(" ", "%20")
        return self.random.choice(HOSTILE_URIS)

    # The mutations: each takes a message and returns it changed.
    def hostile_id(self, message: dict, era: str) -> dict:
        return {**message, "id": self.random.choice(HOSTILE_IDS)}

    def broken_envelope(self, message: dict, era: str) -> dict:
        key, values = self.random.choice([("jsonrpc", ["1.0", 2.0, None, "2.0 ", ""]),
                                          ("method", [5, None, [], {}, "", "tools/call\0"]),
                                          ("params", [[], "x", 5, None, [{}]])])
        value = self.random.choice(values + ["<missing>"])
        message = {**message, key: value}
        return {k: v for k, v in message.items() if v != "<missing>"}

    def odd_strings(self, message, era: str):
        """Every string gets an odd character somewhere, now and then."""
        if isinstance(message, dict):
            return {self.odd_strings(k, era) if self.random.random() < 0.05 else k: self.odd_strings(v, era)
                    for k, v in message.items()}
        if isinstance(message, list):
            return [self.odd_strings(item, era) for item in message]
        if isinstance(message, str) and self.random.random() < 0.4:
            at = self.random.randint(0, len(message))
            return message[:at] + self.random.choice(ODD_TEXT) + message[at:]
        return message

    def hostile_paths(self, message: dict, era: str) -> dict:
        params = message.get("params")
        if not isinstance(params, dict):
            return message
        if "uri" in params:
            params = {**params, "uri": self.random.choice(HOSTILE_URIS)}
        arguments = params.get("arguments")
        if isinstance(arguments, dict):
            key = self.random.choice(["path", "folder", "path"])
            params = {**params, "arguments": {**arguments, key: self.random.choice(HOSTILE_PATHS)}}
        return {**message, "params": params}

    def wrong_types(self, message: dict, era: str) -> dict:
        params = message.get("params")
        if not isinstance(params, dict):
            return message
        arguments = params.get("arguments")
        if isinstance(arguments, dict) and arguments and self.random.random() < 0.7:
            key = self.random.choice(list(arguments) + ["unknown"])
            return {**message, "params": {**params, "arguments": {**arguments, key: self.random.choice(ODD_VALUES)}}}
        keys = [key for key in params if key != "_meta"] + ["arguments", "name", "uri", "cursor"]
        return {**message, "params": {**params, self.random.choice(keys): self.random.choice(ODD_VALUES)}}

    def broken_meta(self, message: dict, era: str) -> dict:
        params = message.get("params")
        if not isinstance(params, dict):
            return message
        meta = self.random.choice([None, [], "x", {}, {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"},
                                   {**META, "io.modelcontextprotocol/protocolVersion": "\ud800"},
                                   {**META, "io.modelcontextprotocol/clientCapabilities": []},
                                   {**META, "progressToken": self.random.choice(HOSTILE_IDS)}])
        return {**message, "params": {**params, "_meta": meta}}

    def broken_bytes(self, message) -> bytes:
        """Truncated or invalid JSON, bytes that are not UTF-8, or JSON that Python reads but JSON has not."""
        text = json.dumps(message).encode()
        choice = self.random.randrange(6)
        if choice == 0:
            return text[: self.random.randint(0, len(text))]
        if choice == 1:
            at = self.random.randint(0, len(text))
            return text[:at] + self.random.choice([b"\xff", b"\xed\xa0\x80", b"\xc3", b"\x00", b"}", b","]) + text[at:]
        if choice == 2:
            return text.replace(b'"2.0"', b"NaN", 1) if b'"2.0"' in text else b"Infinity"
        if choice == 3:
            depth = self.random.choice([100, 10000, 100000])
            return b"[" * depth + b"]" * depth
        if choice == 4:
            return self.random.choice([b"", b" ", b"null", b"1", b'"x"', b"{}", b'{"jsonrpc":"2.0","id":1,"id":[1]}'])
        return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")  # surrogates as raw bytes


class Hang(Exception):
    """No answer within TIMEOUT."""


class Exited(Exception):
    """The server's process ended."""


class Lane:
    """One transport and one era: a server process, restarted when it dies."""

    def __init__(self, step, vault: Path, era: str, work: Path):
        self.step, self.vault, self.era, self.work = step, vault, era, work
        self.starts = self.sent = 0
        self.start()

    def restart(self):
        self.stop()
        self.start()


class StdioLane(Lane):
    """The server over --stdio: one line out, then a ping whose answer marks the end
    of what the line caused (stdio answers in order)."""

    def start(self):
        self.starts += 1
        self.log = open(self.work / f"stdio-{self.era}-{self.starts}.log", "wb")
        command = [sys.executable, str(self.step.server), "--stdio", *vault_args(self.step, self.vault)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                        env=environment(self.work))
        self.lines = queue.Queue()
        threading.Thread(target=self.read, args=(self.process.stdout, self.lines), daemon=True).start()
        if self.era == "handshake":  # 2025-03-26, the one handshake revision that takes batches
            self.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": CLIENT_INFO}}).encode(), None)
            self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', None)

    @staticmethod
    def read(stdout, lines: queue.Queue):
        for line in stdout:
            lines.put(line)
        lines.put(None)  # stdout closed: the process has ended

    def send(self, payload: bytes, message) -> tuple[int, list]:
        self.sent += 1
        probe = f"probe-{self.sent}"
        try:
            self.process.stdin.write(payload.replace(b"\n", b" ") + b"\n")
            self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "ping"}).encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise Exited() from None
        answers, deadline = [], time.monotonic() + TIMEOUT
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise Hang() from None
            if line is None:
                raise Exited()
            answer = json.loads(line)
            if isinstance(answer, dict) and answer.get("id") == probe:
                return 200, answers
            answers.extend(answer if isinstance(answer, list) else [answer])

    def stop(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


class HttpLane(Lane):
    """The server over HTTP: each message a POST on a new connection, with the
    headers its era needs. A streamed answer is read until the response, or, for
    subscriptions/listen, until its acknowledgement; closing then ends it."""

    def start(self):
        self.starts += 1
        log_path = self.work / f"http-{self.era}-{self.starts}.log"
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(self.step.server), "--port", "0", *vault_args(self.step, self.vault)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=environment(self.work))
        url = urlsplit(wait_for_url(self.process, log_path, 30))
        self.host, self.port, self.path = url.hostname, url.port, url.path
        self.sessions = [self.open_session(version) for version in ("2025-11-25", "2025-03-26")] \
            if self.era == "handshake" else []

    def open_session(self, version: str) -> tuple[str, str]:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}}).encode()
        status, headers, _ = self.post(body, {})
        session = (headers.get("Mcp-Session-Id"), version)
        self.post(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', self.session_headers(session))
        return session

    @staticmethod
    def session_headers(session) -> dict:
        return {"Mcp-Session-Id": session[0], "MCP-Protocol-Version": session[1]}

    def send(self, payload: bytes, message) -> tuple[int, list]:
        if self.process.poll() is not None:
            raise Exited()
        self.sent += 1
        if self.era == "handshake":  # the two sessions in turn
            headers = self.session_headers(self.sessions[self.sent % 2])
        else:
            headers = routing_headers(message)
        status, _, answers = self.post(payload, headers)
        return status, answers

    def post(self, body: bytes, headers: dict) -> tuple[int, dict, list]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
        try:
            connection.request("POST", self.path, body, {
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
            response = connection.getresponse()
            if response.headers.get("Content-Type", "").startswith("text/event-stream"):
                answers = read_events(response)
            else:
                answers = json_answers(response.read())
            return response.status, response.headers, answers
        except (TimeoutError, ConnectionResetError, http.client.RemoteDisconnected):
            if self.process.poll() is not None:
                raise Exited() from None
            raise Hang() from None
        except ConnectionRefusedError:
            raise Exited() from None
        finally:
            connection.close()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def routing_headers(message) -> dict:
    """The 2026-07-28 headers that repeat the body, where the body allows; a broken
    body gets the plain version header, and the server says what is wrong."""
    headers = {"MCP-Protocol-Version": STATELESS}
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return headers
    if message["method"].isascii() and message["method"].isprintable():
        headers["Mcp-Method"] = message["method"]
    params = message.get("params")
    name = params.get({"tools/call": "name", "resources/read": "uri"}.get(message["method"], "")) \
        if isinstance(params, dict) else None
    if isinstance(name, str):
        try:
            headers["Mcp-Name"] = name if name.isascii() and name.isprintable() else \
                "=?base64?" + base64.b64encode(name.encode()).decode() + "?="
        except UnicodeEncodeError:
            pass  # a surrogate: no header can say it, and the server refuses the mismatch
    return headers


def read_events(response) -> list:
    answers, deadline = [], time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        line = response.fp.readline()
        if not line:
            return answers
        if line.startswith(b"data: "):
            event = json.loads(line[6:])
            answers.append(event)
            if "id" in event or event.get("method") == "notifications/subscriptions/acknowledged":
                return answers
    raise TimeoutError()


def json_answers(body: bytes) -> list:
    if not body:
        return []
    answer = json.loads(body)
    return answer if isinstance(answer, list) else [answer]


def vault_args(step, vault: Path) -> list[str]:
    return ["--vault", str(vault)] if step.vault else []


def environment(work: Path) -> dict:
    # The offline embedder and a private index; the watcher at a calm pace.
    return {**quiet_environment(str(work / "index")), "VAULT_MCP_WATCH_INTERVAL": "1", "VAULT_MCP_DEBOUNCE": "0.5"}


class Tally:
    def __init__(self):
        self.counts = dict.fromkeys(FINDINGS, 0)
        self.examples: dict[str, list] = {finding: [] for finding in FINDINGS}

    def add(self, finding: str, lane: str, payload: bytes, detail=""):
        self.counts[finding] += 1
        if len(self.examples[finding]) < 5:
            self.examples[finding].append(f"{lane}: {payload[:300]!r} -> {str(detail)[:300]}")

    def judge(self, lane: str, payload: bytes, status: int, answers: list):
        if status >= 500:
            self.add("http 5xx", lane, payload, status)
        for answer in answers:
            if not isinstance(answer, dict):
                continue
            error, result = answer.get("error"), answer.get("result")
            if isinstance(error, dict) and error.get("code") == -32603:
                self.add("internal errors", lane, payload, answer)
            if isinstance(result, dict) and result.get("isError") and "failed unexpectedly" in json.dumps(result):
                self.add("unexpected tool failures", lane, payload, answer)

    def count_tracebacks(self, work: Path):
        for log in sorted(work.glob("*.log")):
            lines = log.read_text(errors="replace").splitlines()
            for number, line in enumerate(lines):
                if line.startswith("Traceback"):  # the exception is the first line after it that is not indented
                    ending = next((later for later in lines[number + 1:] if not later.startswith(" ")), "")
                    self.add("tracebacks", log.name, b"", ending)


def run_lane(lane_class, step, vault: Path, era: str, work: Path, messages: Messages, count: int, tally: Tally):
    name = f"{lane_class.__name__.removesuffix('Lane').lower()}/{era}"
    lane = lane_class(step, vault, era, work)
    try:
        for _ in range(count):
            payload, message = messages.next(era)
            try:
                status, answers = lane.send(payload, message)
                tally.judge(name, payload, status, answers)
            except (Hang, Exited) as failure:
                tally.add("hangs" if isinstance(failure, Hang) else "exits", name, payload)
                if lane.starts > MAX_RESTARTS:
                    return
                lane.restart()
    finally:
        lane.stop()


def tools_and_notes(step, vault: Path, work: Path) -> tuple[dict, list[str]]:
    """The tools the step offers, with their input schemas, and the vault's notes."""
    lines = b"".join(json.dumps(message).encode() + b"\n" for message in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
    command = [sys.executable, str(step.server), "--stdio", *vault_args(step, vault)]
    done = subprocess.run(command, input=lines, capture_output=True, timeout=60, env=environment(work))
    answers = {answer.get("id"): answer for answer in map(json.loads, done.stdout.splitlines())}
    tools = {tool["name"]: tool["inputSchema"] for tool in answers[2]["result"]["tools"]}
    notes = sorted(path.relative_to(vault).as_posix() for path in vault.rglob("*.md"))
    return tools, notes or ["Home.md"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=10, help="the step whose server to fuzz (3 to 10)")
    parser.add_argument("--count", type=int, default=1000, help="messages in all, split across the four lanes")
    parser.add_argument("--seed", type=int, default=1, help="the same seed sends the same messages")
    args = parser.parse_args()
    if args.step < 3:
        parser.error("steps 1 and 2 have no stdio transport: fuzz step 3 or later")
    step = find_step(args.step)
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="fuzz-") as folder:
        work = Path(folder)
        vault = work / "vault"
        shutil.copytree(SAMPLE_VAULT, vault)
        messages = Messages(args.seed, *tools_and_notes(step, vault, work))
        lanes = [(lane, era) for lane in (StdioLane, HttpLane) for era in ("handshake", STATELESS)]
        started = time.monotonic()
        for number, (lane, era) in enumerate(lanes):
            share = args.count // len(lanes) + (number < args.count % len(lanes))
            run_lane(lane, step, vault, era, work, messages, share, tally)
        tally.count_tracebacks(work)
    for finding, examples in tally.examples.items():
        for example in examples:
            print(f"{finding}: {example}", file=sys.stderr)
    counts = ", ".join(f"{finding} {number}" for finding, number in tally.counts.items())
    print(f"fuzz step {args.step}, seed {args.seed}: {messages.count} messages "
          f"(stdio and HTTP, handshake era and {STATELESS}) in {time.monotonic() - started:.0f} s: {counts}")
    sys.exit(1 if any(tally.counts.values()) else 0)


if __name__ == "__main__":
    main()
