"""Replay a step's wire scripts and produce their transcripts.

A wire script is a bash script that sources wire/lib.sh and calls its functions:

    post 'Header: value' ... <<'JSON'      POST the JSON between the markers
    ...
    JSON
    post_large BYTES 'Header: value' ...   POST a ping padded with spaces to BYTES
    send METHOD 'Header: value' ...        a request without a body
    listen_while_editing SECONDS NOTE 'Header: value' ...
                                           the GET stream, read for SECONDS while a
                                           line is added to NOTE in the vault
    remember_version, remember_edit        keep the "version" (or "editId") of the last
                                           answer as $VERSION ($EDIT_ID), which a body
                                           between <<JSON markers (not quoted) may use

With curl on the PATH the script itself runs. Without it, this module reads the
same calls out of the script and makes the requests with http.client (what
urllib uses underneath), printing the transcript exactly as lib.sh does.
"""
import http.client
import os
import re
import select
import shlex
import shutil
import socket
import subprocess
import threading
import time
from collections import defaultdict
from pathlib import Path
from string import Template
from urllib.parse import urlsplit

HIDDEN_HEADERS = {"date", "server"}  # they change on every run
LARGE_PING = '{"jsonrpc": "2.0", "id": 99, "method": "ping"}'  # what post_large pads


def run_with_curl(script: Path, url: str, state_dir: Path, vault: Path | None = None) -> str:
    env = {**os.environ, "MCP_URL": url, "MCP_WIRE_STATE": str(state_dir)}
    if vault is not None:
        env["MCP_VAULT"] = str(vault)
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
    return done.stdout + done.stderr


def run_with_python(script: Path, url: str, state: dict) -> str:
    """state holds $SESSION between scripts, and MCP_VAULT, the vault a script may edit."""
    state.setdefault("MCP_VAULT", str(practice_vault(script)))
    out = []
    for call in parse_script(script):
        if call[0] == REMEMBER:
            name, pattern = REMEMBERED[call[1]]
            found = pattern.search(out[-1] if out else "")
            state[name] = found.group(1) if found else ""
        elif call[0] == LISTEN:
            out.append(listen(url, *call, state))
        else:
            out.append(exchange(url, *expanded(call, state), state))
    return "".join(out)


REMEMBER = "REMEMBER"  # a call of remember_version or remember_edit
REMEMBERED = {  # as lib.sh's grep finds them
    "remember_version": ("VERSION", re.compile(r'"version": "([0-9a-f]*)"')),
    "remember_edit": ("EDIT_ID", re.compile(r'"editId": "([0-9]*)"')),
}


def expanded(call: tuple, state: dict) -> tuple:
    """A body between unquoted markers, with $VERSION and friends as bash expands them."""
    method, headers, body, shown = call
    if isinstance(body, Template):
        body = shown = body.safe_substitute(defaultdict(str, state))
    return method, headers, body, shown


def practice_vault(script: Path) -> Path:
    """The vault lib.sh edits when MCP_VAULT is not set: steps/scratch/vaults/NN-name."""
    step = script.resolve().parent.parent
    vaults = step.parent / "vaults" if step.parent.name == "scratch" else step.parent / "scratch" / "vaults"
    return vaults / step.name


def curl_available() -> bool:
    return shutil.which("curl") is not None


def parse_script(script: Path) -> list[tuple[str, list[str], str, str]]:
    """The requests a wire script makes, in order: (method, headers, body, shown body)."""
    calls, lines = [], iter(script.read_text().splitlines())
    for line in lines:
        words = shlex.split(line, comments=True)
        if not words or words[0] not in ("post", "post_large", "send", "listen_while_editing", *REMEMBERED):
            continue
        if words[0] in REMEMBERED:
            calls.append((REMEMBER, words[0]))
        elif words[0] == "listen_while_editing":
            calls.append((LISTEN, words[3:], words[1], words[2]))
        elif words[0] == "send":
            calls.append((words[1], words[2:], "", ""))
        elif words[0] == "post_large":
            size = int(words[1])
            body = LARGE_PING + " " * (size - len(LARGE_PING))
            calls.append(("POST", words[2:], body, f"{LARGE_PING} ... (padded with spaces to {size} bytes)"))
        else:
            marker = words.pop().removeprefix("<<")  # post ... <<'JSON'
            body_lines = []
            for body_line in lines:
                if body_line == marker:
                    break
                body_lines.append(body_line)
            body = "\n".join(body_lines)
            if "<<'" not in line:  # an unquoted marker: bash expands $NAME in the body
                body = Template(body)
            calls.append(("POST", words[1:], body, body))
    return calls


def exchange(url: str, method: str, headers: list[str], body: str, shown: str, state: dict) -> str:
    # $SESSION and friends as bash expands them: unset means empty, and lib.sh
    # leaves out a header whose value is empty.
    headers = [Template(h).safe_substitute(defaultdict(str, state)) for h in headers]
    headers = [h for h in headers if h.partition(":")[2].strip()]
    parts = urlsplit(url)
    out = [f"> {method} {parts.path}\n"] + [f"> {h}\n" for h in headers] + [">\n"]
    if shown:
        out.append(shown + "\n")
    sent = dict(h.split(":", 1) for h in headers)
    sent = {name.strip(): value.strip() for name, value in sent.items()}
    sent.setdefault("Accept", "*/*")  # what curl sends unless told otherwise
    if body:
        sent.setdefault("Content-Type", "application/x-www-form-urlencoded")  # likewise
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        send_request(connection, method, parts.path, body.encode(), sent)
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
    finally:
        connection.close()
    out.append(f"< HTTP/{response.version // 10}.{response.version % 10} {response.status} {response.reason}\n")
    for name, value in response.getheaders():
        if name.lower() not in HIDDEN_HEADERS:
            out.append(f"< {name}: {value}\n")
        if name.lower() == "mcp-session-id":
            state["SESSION"] = value
    out.append("<\n")
    out.extend(line + "\n" for line in split_lines(text))
    out.append("\n")
    return "".join(out)


LISTEN = "GET-WHILE-EDITING"  # a call of listen_while_editing: (LISTEN, headers, seconds, note)


def listen(url: str, _kind: str, headers: list[str], seconds: str, note: str, state: dict) -> str:
    """What lib.sh's listen_while_editing prints: the GET stream as curl shows it, read for
    `seconds` while, a second in, a line is added to `note` in the vault."""
    headers = [Template(h).safe_substitute(defaultdict(str, state)) for h in headers]
    parts = urlsplit(url)
    out = [f"> GET {parts.path}\n"] + [f"> {h}\n" for h in headers]
    out.append(f">\n(a second later, a line is added to {note}; the stream is read for {seconds} s)\n")
    request = [f"GET {parts.path} HTTP/1.1", f"Host: {parts.netloc}", "User-Agent: curl", *headers]
    time.sleep(1.0)  # as lib.sh waits: a change made just before is still on its way through the watcher
    received, deadline = b"", time.monotonic() + float(seconds)
    edit = threading.Timer(1.0, add_a_line, args=(Path(state["MCP_VAULT"]) / note,))
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as connection:
        connection.sendall(("\r\n".join(request) + "\r\n\r\n").encode())
        edit.start()
        while (left := deadline - time.monotonic()) > 0:
            if select.select([connection], [], [], left)[0]:
                data = connection.recv(65536)
                if not data:
                    break
                received += data
    edit.join()
    head, _, body = received.partition(b"\r\n\r\n")
    status, *fields = head.decode().split("\r\n")
    out.append(f"< {status}\n")
    out.extend(f"< {field}\n" for field in fields if field.partition(":")[0].lower() not in HIDDEN_HEADERS)
    out.append("<\n")
    out.extend(line + "\n" for line in split_lines(dechunked(body).decode("utf-8", "replace")))
    out.append("\n")
    return "".join(out)


def add_a_line(note: Path) -> None:
    with open(note, "a", encoding="utf-8") as file:
        file.write("\nA line added while the stream listens.\n")


def dechunked(body: bytes) -> bytes:
    """The data of the whole chunks of a chunked body, as curl passes them on."""
    data = b""
    while b"\r\n" in body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0 or len(rest) < size + 2:
            break
        data, body = data + rest[:size], rest[size + 2 :]
    return data


def send_request(connection, method: str, path: str, body: bytes, headers: dict) -> None:
    """Send like curl: a body over 1 MiB waits for the server's go-ahead (Expect:
    100-continue) for up to a second, so a server that refuses it early is never sent it.
    (http.client skips the interim "100 Continue" when it reads the answer.)"""
    if len(body) <= 1024 * 1024:
        return connection.request(method, path, body or None, headers)
    connection.putrequest(method, path, skip_accept_encoding=True)
    for name, value in {**headers, "Content-Length": str(len(body)), "Expect": "100-continue"}.items():
        connection.putheader(name, value)
    connection.endheaders()
    answered, _, _ = select.select([connection.sock], [], [], 1.0)
    if not answered or connection.sock.recv(12, socket.MSG_PEEK).endswith(b" 100"):
        connection.send(body)


def split_lines(text: str) -> list[str]:
    """Lines as awk sees them: split on newlines only, no empty line after the last."""
    lines = text.replace("\r", "").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


SESSION_HEADER = re.compile(r"^< Mcp-Session-Id: (\S+)$", re.MULTILINE | re.IGNORECASE)


def normalise(transcript: str, vault: Path | None, session_ids: set[str]) -> str:
    """Replace what must vary between runs with placeholders. session_ids collects
    the ids the server handed out, so later scripts that send them back match too."""
    session_ids.update(SESSION_HEADER.findall(transcript))
    for session_id in session_ids:
        transcript = transcript.replace(session_id, "<session-id>")
    if vault is not None:
        transcript = transcript.replace(str(vault), "<vault>")
    return transcript
