"""--log-file, also from VAULT_MCP_LOG_FILE: the log goes to a file, and stderr stays quiet."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from probe import CLIENT_INFO, HANDSHAKE_VERSION, expect, ok

MESSAGES = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Rye"}}},
]


def check(server):
    shown = subprocess.run([sys.executable, "server.py", "--help"], cwd=server.folder,
                           capture_output=True, text=True, timeout=60)
    expect("--log-file" in shown.stdout,
           "server.py --help shows no --log-file: add it in parse_args (server.py) with option(...)")
    expect("VAULT_MCP_LOG_FILE" in shown.stdout,
           "--help does not name VAULT_MCP_LOG_FILE: add the option with option(...), which names its variable")
    ok("--help shows --log-file and its variable")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "vault").mkdir()
        (root / "vault" / "Rye.md").write_text("# Rye\n\nA dense, sour loaf.\n")
        log_file = root / "server.log"
        done = subprocess.run(
            [sys.executable, str(server.folder / "server.py"), "--stdio", "--vault", str(root / "vault"),
             "--embedder", "hash", "--index-dir", str(root / "index")],
            input="".join(json.dumps(message) + "\n" for message in MESSAGES),
            env={**os.environ, "VAULT_MCP_LOG_FILE": str(log_file)},
            capture_output=True, text=True, timeout=60,
        )
        expect(done.returncode == 0, f"the server over stdio failed: {done.stderr.strip()[-600:]}")
        expect(log_file.is_file(), "with VAULT_MCP_LOG_FILE set, no log file was written: pass args.log_file to "
                                   "logging.basicConfig (filename=) in main")
        logged = log_file.read_text()
    expect("tools/call tool=get_note" in logged,
           f"the log file lacks the request line of get_note; it holds {logged[-300:]!r}")
    expect("tools/call" not in done.stderr,
           "the request line still went to stderr too: basicConfig should write to the file alone")
    ok("with VAULT_MCP_LOG_FILE, the log goes to the file and not to stderr")
