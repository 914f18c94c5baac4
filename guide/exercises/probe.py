"""What an exercise's check.py uses: talk to the reader's server and say what is missing.

A check is a function `check(server)` that asks the running copy questions, calls
ok("...") for each thing that already works, and expect(condition, "...") for each
thing the exercise asks for. The first expectation that fails ends the check; its
sentence, written for the reader, says what is still missing.
"""
import http.client
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ACCEPT = "application/json, text/event-stream"
CLIENT_INFO = {"name": "exercise-check", "version": "1"}
HANDSHAKE_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


class Missing(Exception):
    """Something the exercise asks for that the copy does not do yet."""


def expect(condition, missing: str) -> None:
    if not condition:
        raise Missing(missing)


def ok(what: str) -> None:
    print(f"  ok       {what}")


def shown(value) -> str:
    """A JSON value as the reader would see it on the wire, cut short if long."""
    text = json.dumps(value)
    return text if len(text) <= 300 else text[:300] + " ..."


class Reply:
    def __init__(self, status: int, headers, body: bytes):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            raise Missing(f"the server answered HTTP {self.status} with a body that is not JSON: {self.body[:200]!r}")


class Server:
    """The reader's copy of a step, started on a free port by guide/exercises/run.py."""

    def __init__(self, url: str, folder: Path):
        self.url, self.folder = url, folder
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path
        self.session_id = None  # set by handshake()
        self.next_id = 1

    def post(self, message, headers: dict | None = None) -> Reply:
        """POST one JSON message as an MCP client would; the session's headers go along."""
        sent = {"Content-Type": "application/json", "Accept": ACCEPT}
        if self.session_id:
            sent |= {"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": HANDSHAKE_VERSION}
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            connection.request("POST", self.path, json.dumps(message), sent | (headers or {}))
            response = connection.getresponse()
            return Reply(response.status, response.headers, response.read())
        finally:
            connection.close()

    def call(self, method: str, params: dict | None = None) -> dict:
        """A request; the whole JSON-RPC response (with "result" or "error")."""
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        answer = self.post(message).json()
        expect(isinstance(answer, dict) and ("result" in answer or "error" in answer),
               f"{method} was answered with something that is not a JSON-RPC response: {shown(answer)}")
        return answer

    def result(self, method: str, params: dict | None = None) -> dict:
        """A request that must succeed; its result."""
        answer = self.call(method, params)
        expect("result" in answer, f"{method} failed: {shown(answer.get('error'))}")
        return answer["result"]

    def notify(self, method: str) -> Reply:
        return self.post({"jsonrpc": "2.0", "method": method})

    def initialize(self, **changes) -> tuple[Reply, dict]:
        """initialize with the usual params, any of them changed; the reply and its JSON."""
        params = {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO} | changes
        reply = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": "initialize", "params": params})
        self.next_id += 1
        return reply, reply.json()

    def handshake(self, finish: bool = True) -> dict:
        """Open a session (steps 2 on): initialize, then notifications/initialized
        unless finish is False. The initialize result."""
        reply, answer = self.initialize()
        expect("result" in answer, f"initialize failed: {shown(answer.get('error'))}")
        self.session_id = reply.headers.get("Mcp-Session-Id")
        if finish:
            self.notify("notifications/initialized")
        return answer["result"]

    def stateless(self, method: str, params: dict | None = None, meta: dict = META) -> Reply:
        """A 2026-07-28 request (step 3 on): _meta in the body, routing headers to match."""
        params = {**(params or {}), "_meta": meta}
        headers = {"MCP-Protocol-Version": STATELESS_VERSION, "Mcp-Method": method}
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        session, self.session_id = self.session_id, None  # no session in this era
        try:
            return self.post(message, headers)
        finally:
            self.session_id = session

    def stdio(self, messages: list[dict]) -> "StdioRun":
        """Start the copy with --stdio, write the messages, close stdin, read everything."""
        lines = "".join(json.dumps(message) + "\n" for message in messages)
        done = subprocess.run(
            [sys.executable, str(self.folder / "server.py"), "--stdio"],
            input=lines, capture_output=True, text=True, timeout=20,
        )
        return StdioRun(done.stdout.splitlines(), done.stderr)


class StdioRun:
    """What a stdio server wrote: stdout (protocol only, if all is well) and stderr (logs)."""

    def __init__(self, stdout_lines: list[str], stderr: str):
        self.stdout_lines, self.stderr = stdout_lines, stderr

    def messages(self) -> dict:
        """The answers on stdout, by id; Missing for any line that is not a JSON message."""
        answers = {}
        for line in self.stdout_lines:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            expect(isinstance(message, dict),
                   f"stdout carried a line that is not a JSON message: {line!r}. Over stdio, stdout is the "
                   f"protocol and nothing else: log with log.info(...), which goes to stderr, never print()")
            answers[message.get("id")] = message
        return answers


def text_of(result: dict, what: str) -> str:
    """The text of a tool result's first content block."""
    content = result.get("content") if isinstance(result, dict) else None
    expect(isinstance(content, list) and content and isinstance(content[0], dict) and "text" in content[0],
           f"{what} answered without a text block in its content: {shown(result)}")
    return content[0]["text"]


def tool_error(answer: dict, what: str, argument: str, hint: str = "") -> None:
    """A bad argument must come back as a tool result with isError: true, naming the argument."""
    expect("result" in answer,
           f"{what} was answered with a JSON-RPC error, {shown(answer.get('error'))}. A bad argument is for "
           f"the model to read: answer it with a tool result and isError: true")
    expect(answer["result"].get("isError") is True,
           f"{what} was accepted: {shown(answer['result'])}. It should be refused with isError: true. {hint}")
    expect(argument in text_of(answer["result"], what),
           f"{what} was refused, but the message does not name the argument {argument!r}, so the model "
           f"cannot tell what to fix: {text_of(answer['result'], what)!r}")


# ---- chapter 6 on: the copy's embedders, and a stand-in for Ollama ----------------


def run_copy(folder: Path, args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    """python3 with args, run in the copy's folder: a program of the copy (["embeddings.py",
    ...]) or ["-c", code] that imports the copy's modules. The reader's OLLAMA_* variables
    are left out; env adds the ones a check wants."""
    clean = {name: value for name, value in os.environ.items() if not name.startswith("OLLAMA_")}
    return subprocess.run([sys.executable, *args], cwd=folder, env=clean | (env or {}),
                          capture_output=True, text=True, timeout=60)


class StandInOllama:
    """A stand-in for Ollama on a free loopback port, used in a with block. GET /api/tags
    lists `models`; POST /api/embed answers one small vector per input, or 404 for a
    model it does not have, as Ollama does. `requests` keeps (path, parsed body)."""

    def __init__(self, models=("nomic-embed-text:latest",)):
        self.models, self.requests = list(models), []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                self.reply(*stand_in.answer(self.path, None))

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                self.reply(*stand_in.answer(self.path, body))

            def reply(self, status: int, body: dict):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def has(self, model) -> bool:
        return model in self.models or f"{model}:latest" in self.models

    def answer(self, path: str, body) -> tuple[int, dict]:
        self.requests.append((path, body))
        if path == "/api/tags":
            return 200, {"models": [{"name": name, "model": name} for name in self.models]}
        if path != "/api/embed" or not isinstance(body, dict) or not isinstance(body.get("input"), list):
            return 404, {"error": f"the stand-in for Ollama knows no {path} of this shape"}
        if not self.has(body.get("model")):
            return 404, {"error": f"model '{body.get('model')}' not found"}
        return 200, {"model": body["model"], "embeddings": [[i + 1.0, 1.0, 1.0, 1.0] for i in range(len(body["input"]))]}

    def embedded(self) -> list[dict]:
        """The bodies of the /api/embed requests, in order."""
        return [body for path, body in self.requests if path == "/api/embed"]

    def __enter__(self) -> "StandInOllama":
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
