"""Small clients for the tests, over HTTP and stdio: every header and byte is the test's choice."""
import http.client
import importlib
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit


class Reply:
    def __init__(self, response: http.client.HTTPResponse):
        self.status = response.status
        self.headers = response.headers
        self.body = response.read()

    def json(self):
        return json.loads(self.body)


class Client:
    """Raw HTTP to one server."""

    def __init__(self, url: str):
        self.url = url
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path

    def request(self, method: str, body=None, headers=None, path=None) -> Reply:
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            connection.request(method, path or self.path, body, headers or {})
            return Reply(connection.getresponse())
        finally:
            connection.close()

    def post(self, body, headers=None, **kw) -> Reply:
        return self.request("POST", body, {"Content-Type": "application/json", **(headers or {})}, **kw)


MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
CLIENT_INFO = {"name": "pytest", "version": "1"}


def rpc(method, id=1, **params):
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params:
        message["params"] = params
    return message


class McpClient(Client):
    """A handshake-era client over HTTP that keeps its session id."""

    def post(self, body, headers=None, **kw) -> Reply:
        return self.request("POST", body, {**MCP_HEADERS, **(headers or {})}, **kw)

    def initialize(self, version="2025-11-25") -> Reply:
        return self.post(rpc("initialize", protocolVersion=version, capabilities={}, clientInfo=CLIENT_INFO))

    def open_session(self) -> str:
        """initialize, then notifications/initialized: a session ready for work."""
        session_id = self.initialize().headers["Mcp-Session-Id"]
        reply = self.send(session_id, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert reply.status == 202
        return session_id

    def send(self, session_id, message, headers=None) -> Reply:
        session_headers = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
        return self.post(message, {**session_headers, **(headers or {})})


class StdioServer:
    """A step's server started with --stdio, spoken to one line at a time.

    A thread reads stdout into a queue, so that a server that stays silent fails
    the test after a timeout instead of hanging it. `command` and `env` start it
    some other way: from an archive, with a vault."""

    def __init__(self, server_py=None, *args: str, command=None, env: dict | None = None):
        self.process = subprocess.Popen(
            command or [sys.executable, str(server_py), "--stdio", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stdout(self):
        for line in self.process.stdout:
            self.lines.put(line)

    def send_line(self, data: bytes):
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def send(self, message):
        self.send_line(json.dumps(message).encode())

    def read(self, timeout=10) -> dict:
        return json.loads(self.lines.get(timeout=timeout))

    def ask(self, message) -> dict:
        self.send(message)
        return self.read()

    def handshake(self) -> None:
        self.ask(rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def answer(self, request_id, timeout=10) -> dict:
        """The response to one request, past the notifications that may come first (from step 9,
        of a note the request created)."""
        for _ in range(20):
            message = self.read(timeout)
            if message.get("id") == request_id:
                return message
        raise AssertionError(f"no response to request {request_id} among 20 messages")

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self.process.stdin.close()
        self.process.stderr.close()


ROOT = Path(__file__).resolve().parent.parent
STEPS_DIR = ROOT / "steps"


def distinct_copies(name: str, since: int = 2) -> list[int]:
    """The steps, from step `since` on, whose copy of `name` differs from every earlier one.

    A file a step does not change is a byte-identical copy of the step before's, so
    testing it again tests nothing new; a step that rewrites it must keep every promise
    of the copies before. Parametrise a module's tests over these steps:

        @pytest.mark.parametrize("step", distinct_copies("http_transport.py", since=2))
    """
    seen, steps = set(), []
    for folder in sorted(STEPS_DIR.glob("[0-9][0-9]-*")):
        number, file = int(folder.name[:2]), folder / name
        if number >= since and file.is_file() and file.read_bytes() not in seen:
            seen.add(file.read_bytes())
            steps.append(number)
    return steps


def _file_of(module) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file else None


def _from_a_step(module) -> bool:
    """True for a module loaded from a step folder (steps/NN-name/, or a scratch copy of one)."""
    file = _file_of(module)
    return file is not None and file.parent != STEPS_DIR and STEPS_DIR in file.parents


def _from_the_repository(module) -> bool:
    """True for the project's own code (not the packages in .venv)."""
    file = _file_of(module)
    return file is not None and any(folder in file.parents for folder in (STEPS_DIR, ROOT / "tests", ROOT / "guide"))


@contextmanager
def step_modules(*folders: Path):
    """Import from these step folders, the first first, inside the block, and only there.

    This is how a test imports a step's modules; never put a step folder on sys.path
    yourself. Every step folder holds modules of the same names (vault, index, notes,
    frontmatter...), so whatever an earlier test file imported would otherwise decide
    which step's copy a later one gets. Write, at the top of the test file:

        with step_modules(STEPS_DIR / "07-vector-index"):
            from index import ChunkIndex
            import keyword_index

    or inside a test, for a test parametrised over steps. Inside the block no module
    of any other step is visible, and every module is loaded afresh: new module
    objects, so no state or cache left by another test file. Afterwards sys.path and
    sys.modules are as they were; the names imported keep their copies.
    """
    names = {file.stem for folder in folders for file in Path(folder).glob("*.py")}
    loaded = list(sys.modules.items())  # a copy: a server thread may import meanwhile
    hidden = {name: module for name, module in loaded if name in names or _from_a_step(module)}
    for name in hidden:
        del sys.modules[name]
    before = set(sys.modules)
    saved_path = sys.path[:]
    sys.path[:0] = [str(folder) for folder in folders]
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for name, module in list(sys.modules.items()):
            if name not in before and (name in names or _from_the_repository(module)):
                del sys.modules[name]  # the next block loads its own copy
        sys.modules.update(hidden)


def tool_session(url: str, step_path: Path) -> McpClient:
    """A client with an open session on a step's server that knows the output schema of each
    tool, and the step's own validate, for tool_call, tool_data and tool_refusal."""
    with step_modules(step_path):
        from schema import validate
    client = McpClient(url)
    client.session_id = client.open_session()
    tools = client.send(client.session_id, rpc("tools/list")).json()["result"]["tools"]
    client.schemas = {tool["name"]: tool["outputSchema"] for tool in tools}
    client.validate = validate
    return client


def tool_call(client: McpClient, name: str, **arguments) -> dict:
    return client.send(client.session_id, rpc("tools/call", name=name, arguments=arguments)).json()["result"]


def tool_data(client: McpClient, name: str, **arguments) -> dict:
    """The structured answer of a call that must succeed, checked against the tool's output schema."""
    result = tool_call(client, name, **arguments)
    assert result["isError"] is False, result
    assert client.validate(client.schemas[name], result["structuredContent"]) == []
    return result["structuredContent"]


def tool_refusal(client: McpClient, name: str, **arguments) -> str:
    """The text of a call that must be refused as a tool error."""
    result = tool_call(client, name, **arguments)
    assert result["isError"] is True, result
    return result["content"][0]["text"]


def cpu_bounded(seconds: float, function, *args):
    """function(*args), failing once it has used `seconds` of processor time.

    A loose bound that only a runaway crosses: a hang detector, not a benchmark. It
    counts this process's processor time, not the clock, so other processes on a busy
    machine do not move it. Where the system has the timer, a run that goes on too long
    is stopped, not waited for."""
    timer = hasattr(signal, "ITIMER_PROF") and threading.current_thread() is threading.main_thread()
    if timer:

        def stop(signum, frame):
            raise AssertionError(f"{function.__name__} used more than {seconds} s of processor time")

        previous = signal.signal(signal.SIGPROF, stop)
        signal.setitimer(signal.ITIMER_PROF, seconds)
    started = time.process_time()
    try:
        result = function(*args)
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
    assert time.process_time() - started < seconds
    return result


def note_chunks(vault_index, path: str) -> list:
    """A note cut into the chunks the index stores. Step 10 reads them in one read with
    the note's links (VaultIndex.read_parts); steps 7-9 have VaultIndex.note_chunks."""
    if hasattr(vault_index, "read_parts"):
        return vault_index.read_parts(path)[0]
    return vault_index.note_chunks(path)


def index_folder(index_dir: Path) -> Path:
    """Where a server keeps its index in `index_dir`: step 10 keeps one per embedder, each
    in a folder of its own (index.open_embedder_folder); the steps before, index_dir itself."""
    if (index_dir / "index.json").exists() or not index_dir.is_dir():
        return index_dir
    folders = [folder for folder in index_dir.iterdir() if (folder / "index.json").exists()]
    return folders[0] if len(folders) == 1 else index_dir
