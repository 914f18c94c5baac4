"""make interop: the official MCP Python SDK's client against the newest step.

Runs in its own virtual environment (.venv-interop, made by `make interop`), since
the SDK is a dependency of this check only. For each transport (stdio, HTTP) and
each client mode (auto: probe the 2026-07-28 era first; legacy: the handshake), on a
temporary copy of the sample vault, it lists the tools, lists and reads notes, sends
a path that leaves the vault (an isError result), calls a tool that does not exist
(a JSON-RPC error), and lists and reads resources; from step 7 on it searches in
each mode, from step 8 on it asks for backlinks, and from step 9 on it writes a
note with create_note and searches until the watcher has indexed it (bounded).
Exits non-zero on any surprise.
"""
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import Implementation

STEPS = Path(__file__).resolve().parent.parent / "steps"
sys.path.insert(0, str(STEPS))
from launch import quiet_environment, running_server  # noqa: E402
from manifest import SAMPLE_VAULT, load_steps  # noqa: E402

EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}


async def conversation(server, mode: str) -> str:
    info = Implementation(name="interop", version="1")
    async with Client(server, mode=mode, client_info=info, read_timeout_seconds=20) as client:
        assert client.protocol_version == EXPECTED_VERSION[mode], client.protocol_version
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names[:2] == ["list_notes", "get_note"], names
        listed = await client.call_tool("list_notes", {"folder": "Inbox"})
        assert not listed.is_error and "Inbox/Try tangzhong.md" in listed.structured_content["notes"], listed
        note = await client.call_tool("get_note", {"path": "Ferments/Crème fraîche"})
        assert not note.is_error and note.structured_content["path"] == "Ferments/Crème fraîche.md", note
        hostile = await client.call_tool("get_note", {"path": "../../etc/passwd"})
        assert hostile.is_error and "'..'" in hostile.content[0].text, hostile
        try:
            await client.call_tool("no_such_tool", {})
        except MCPError as error:
            assert error.code == -32602, error
        else:
            raise AssertionError("an unknown tool did not raise")
        if "search_vault" in names:  # from step 7 on, in every mode
            for search_mode in ("hybrid", "semantic", "keyword"):
                arguments = {"query": "cabbage and salt in brine", "limit": 3, "mode": search_mode}
                found = await client.call_tool("search_vault", arguments)
                assert not found.is_error and found.structured_content["results"], found
                paths = [hit["path"] for hit in found.structured_content["results"]]
                assert any(path.startswith("Ferments/") for path in paths), (search_mode, paths)
        if "get_backlinks" in names:  # from step 8 on
            linked = await client.call_tool("get_backlinks", {"path": "Ferments/Troubleshooting"})
            assert not linked.is_error, linked
            sources = [link["path"] for link in linked.structured_content["backlinks"]]
            assert "Ferments/Kimchi.md" in sources, sources
        if "create_note" in names:  # from step 9 on, the watcher indexes what create_note wrote
            await find_what_was_written(client)
        resources = (await client.list_resources()).resources
        uri = next(str(r.uri) for r in resources if r.name == "Inbox/Try tangzhong.md")
        read = await client.read_resource(uri)
        assert "tangzhong" in read.contents[0].text.lower(), read
        return client.protocol_version


async def find_what_was_written(client, timeout: float = 15.0) -> None:
    """create_note, then search until the new note is found (bounded): the watcher's work."""
    word = f"quokkaberry{time.monotonic_ns()}"  # one word no other note holds, new on every run
    made = await client.call_tool("create_note", {"title": f"Interop {word}", "content": f"A {word} jam."})
    assert not made.is_error, made
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await client.call_tool("search_vault", {"query": word, "limit": 3})
        paths = [hit["path"] for hit in (found.structured_content or {}).get("results", [])]
        if made.structured_content["path"] in paths:
            return
        await anyio.sleep(0.2)
    raise AssertionError(f"the note create_note wrote was not found by search within {timeout} s")


def main() -> int:
    newest = load_steps()[-1]
    server = newest.server  # the newest step
    failures = 0
    with tempfile.TemporaryDirectory() as tmp, running_server(server, "--vault", str(vault_copy(tmp))) as (url, _):
        arguments = [str(server), "--stdio", "--vault", str(vault_copy(tmp))]
        stdio = StdioServerParameters(command=sys.executable, args=arguments,
                                      env=quiet_environment(str(Path(tmp) / "stdio-index")))
        for transport, target in (("stdio", stdio), ("http", url)):
            for mode in ("auto", "legacy"):
                try:
                    version = anyio.run(conversation, target, mode)
                    print(f"ok    {transport:5} {mode:6} spoke {version}: tools, notes, search in 3 modes, isError, -32602, resources"
                          f"{', backlinks' if newest.number >= 8 else ''}"
                          f"{', a new note found' if newest.number >= 9 else ''}")
                except Exception as error:  # report every combination, then fail
                    failures += 1
                    print(f"FAIL  {transport:5} {mode:6} {type(error).__name__}: {error!r}")
    print(f"interop: {4 - failures} passed, {failures} failed")
    return 1 if failures else 0


def vault_copy(tmp: str) -> Path:
    vault = Path(tmp) / "vault"
    if not vault.exists():
        shutil.copytree(SAMPLE_VAULT, vault)
    return vault


if __name__ == "__main__":
    sys.exit(main())
