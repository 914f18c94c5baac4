"""make interop: the official MCP Python SDK's client against step 3.

Runs in its own virtual environment (.venv-interop, made by `make interop`), since
the SDK is a dependency of this check only. For each transport (stdio, HTTP) and
each client mode (auto: probe the 2026-07-28 era first; legacy: the handshake), it
lists the tools, calls echo, calls echo wrongly (an isError result) and calls a tool
that does not exist (a JSON-RPC error). Exits non-zero on the first surprise.
"""
import sys
from pathlib import Path

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import Implementation

STEPS = Path(__file__).resolve().parent.parent / "steps"
sys.path.insert(0, str(STEPS))
from launch import running_server  # noqa: E402
from manifest import find_step  # noqa: E402

EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}


async def conversation(server, mode: str) -> str:
    info = Implementation(name="interop", version="1")
    async with Client(server, mode=mode, client_info=info, read_timeout_seconds=20) as client:
        assert client.protocol_version == EXPECTED_VERSION[mode], client.protocol_version
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == ["ping", "echo"], names
        echoed = await client.call_tool("echo", {"text": "über the wire"})
        assert not echoed.is_error and echoed.content[0].text == "über the wire", echoed
        wrong = await client.call_tool("echo", {"text": 42})
        assert wrong.is_error, wrong
        try:
            await client.call_tool("no_such_tool", {})
        except MCPError as error:
            assert error.code == -32602, error
        else:
            raise AssertionError("an unknown tool did not raise")
        return client.protocol_version


def main() -> int:
    server = find_step(3).server
    stdio = StdioServerParameters(command=sys.executable, args=[str(server), "--stdio"])
    failures = 0
    with running_server(server) as (url, _log):
        for transport, target in (("stdio", stdio), ("http", url)):
            for mode in ("auto", "legacy"):
                try:
                    version = anyio.run(conversation, target, mode)
                    print(f"ok    {transport:5} {mode:6} spoke {version}: listed, called, isError, -32602")
                except Exception as error:  # report every combination, then fail
                    failures += 1
                    print(f"FAIL  {transport:5} {mode:6} {type(error).__name__}: {error}")
    print(f"interop: {4 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
