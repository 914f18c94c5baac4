#!/usr/bin/env python3
"""A tiny MCP client over stdio: it starts server.py --stdio and prints every
message it sends (>>>) and receives (<<<), one conversation in each protocol era.

Run it:  python3 client.py     (the server's log lines appear on stderr)
         python3 client.py --vault PATH    (what follows client.py goes to the server)
"""
import json
import subprocess
import sys
from pathlib import Path

SERVER = Path(__file__).with_name("server.py")
CLIENT_INFO = {"name": "client.py", "version": "0.7.0"}
# Every 2026-07-28 request carries these in params._meta.
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


class StdioClient:
    def __init__(self, server_args: list[str]):
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "--stdio", *server_args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        self.next_id = 1

    def send(self, message: dict) -> None:
        line = json.dumps(message)
        print(">>>", line)
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> dict:
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        self.send(message)
        line = self.process.stdout.readline()  # this server answers in order, one line each
        print("<<<", line.rstrip("\n"))
        return json.loads(line)

    def close(self) -> int:
        self.process.stdin.close()  # end of input: the server exits
        return self.process.wait(timeout=10)


def main() -> int:
    client = StdioClient(sys.argv[1:])
    print("# The handshake era (2025-11-25): initialize, confirm, then work.")
    client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO})
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # no answer comes
    client.request("tools/call", {"name": "list_notes", "arguments": {"folder": "Inbox"}})
    client.request("tools/call", {"name": "get_note", "arguments": {"path": "../Home.md"}})
    client.request("tools/call", {"name": "search_vault", "arguments": {"query": "cabbage brine", "limit": 2}})

    print("# The stateless era (2026-07-28): no handshake; every request says who it is.")
    client.request("tools/call", {"name": "get_note", "arguments": {"path": "Inbox/Try tangzhong"}, "_meta": META})
    client.request("resources/read", {"uri": "vault:///Inbox/Rice%20koji%20quick%20capture.md", "_meta": META})
    return client.close()


if __name__ == "__main__":
    sys.exit(main())
