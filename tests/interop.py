"""make interop: the official MCP Python SDK's client against the newest step.

Runs in its own virtual environment (.venv-interop, made by `make interop`), since
the SDK is a dependency of this check only. For each transport (stdio, HTTP) and
each client mode (auto: probe the 2026-07-28 era first; legacy: the handshake), on a
temporary copy of the sample vault, it lists the tools, lists and reads notes, sends
a path that leaves the vault (an isError result), calls a tool that does not exist
(a JSON-RPC error), and lists and reads resources; from step 7 on it searches in
each mode, from step 8 on it asks for backlinks, opens a note by a link's name and
lists the tags, and from step 9 on it writes a
note with create_note and searches until the watcher has indexed it (bounded).
Then the same conversation with the bundle of make bundle, unpacked and started as
its manifest says (also on a PATH whose python3 is 3.9), with the .pyz of make
pyz, and with the command vault-mcp that `pip install .` makes in a fresh virtual
environment; and the official MCPB command line (mcpb validate, installed by make into
.mcpb-cli) on the bundle's manifest, when npm could install it. Exits non-zero on
any surprise.
"""
import json
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import Implementation

STEPS = Path(__file__).resolve().parent.parent / "steps"
sys.path.insert(0, str(STEPS))
from launch import quiet_environment, running_server  # noqa: E402
from manifest import SAMPLE_VAULT, load_steps  # noqa: E402
from mcpb_client import build, launch_command, old_python_machine, unpack  # noqa: E402

MCPB = Path(__file__).resolve().parent.parent / ".mcpb-cli" / "node_modules" / ".bin" / "mcpb"

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
            by_name = await client.call_tool("get_note", {"path": "troubleshooting"})  # a link's name, two notes
            found = by_name.structured_content or {}
            assert not by_name.is_error and found["resolvedFrom"] == "troubleshooting", by_name
            assert found["candidates"] == ["Bread/Troubleshooting.md", "Ferments/Troubleshooting.md"], found
            tags = await client.call_tool("list_tags", {})
            counts = {tag["tag"]: tag["notes"] for tag in (tags.structured_content or {}).get("tags", [])}
            assert not tags.is_error and counts["ferment"] >= counts["ferment/lacto"] > 0, tags
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
                          f"{', backlinks, a note by link name, tags' if newest.number >= 8 else ''}"
                          f"{', a new note found' if newest.number >= 9 else ''}")
                except Exception as error:  # report every combination, then fail
                    failures += 1
                    print(f"FAIL  {transport:5} {mode:6} {type(error).__name__}: {error!r}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, target in archives(Path(tmp)):
            try:
                version = anyio.run(conversation, target, "auto")
                print(f"ok    {name:12} spoke {version}: the same conversation, a new note found")
            except Exception as error:
                failures += 1
                print(f"FAIL  {name:12} {type(error).__name__}: {error!r}")
        failures += validate(Path(tmp) / "bundle")
    print(f"interop: {failures} failed" if failures else "interop: every check passed")
    return 1 if failures else 0


def archives(tmp: Path):
    """(name, how to start it) for the bundle, unpacked and started as its manifest
    says with the user's choice of vault, and for the .pyz, run from its own folder."""
    build(tmp / "dist", "bundle", "pyz")
    vault = vault_copy(str(tmp))
    manifest = unpack(tmp / "dist" / "obsidian-vault.mcpb", tmp / "bundle")
    command, env = launch_command(manifest, tmp / "bundle", {"vault": str(vault), "embedder": "hash"})
    yield "bundle", StdioServerParameters(command=command[0], args=command[1:],
                                          env=quiet_environment(str(tmp / "bundle-index")) | env)
    # The same bundle where python3 is 3.9 and a newer Python is where Homebrew puts it.
    machine = old_python_machine(tmp / "machine")
    yield "bundle, 3.9", StdioServerParameters(command=command[0], args=command[1:],
                                               env=quiet_environment(str(tmp / "bundle-index")) | env | machine)
    pyz = tmp / "dist" / "obsidian-vault.pyz"
    yield "pyz", StdioServerParameters(command=sys.executable, args=[str(pyz), "--vault", str(vault), "--stdio"],
                                       cwd=str(tmp), env=quiet_environment(str(tmp / "pyz-index")))
    command = pip_installed(tmp / "venv")
    yield "vault-mcp", StdioServerParameters(command=str(command), args=["--vault", str(vault), "--stdio"],
                                             cwd=str(tmp), env=quiet_environment(str(tmp / "pip-index")))


def pip_installed(environment: Path) -> Path:
    """`pip install .` of a copy of this repository (a build writes beside pyproject.toml)
    into a fresh virtual environment; the command it makes."""
    source = environment.parent / "source"
    shutil.copytree(STEPS.parent, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", ".mcpb-cli", "dist", "scratch", "build", "__pycache__", "*.egg-info"))
    venv.create(environment, with_pip=True)
    bin_folder = environment / ("Scripts" if sys.platform == "win32" else "bin")
    subprocess.run([str(bin_folder / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    str(source)], check=True, timeout=600)
    return bin_folder / "vault-mcp"


def validate(bundle: Path) -> int:
    """mcpb validate on the unpacked bundle's manifest, and on a broken copy, which it
    must refuse; the number of failures. Skipped, and said so, without the command."""
    if not MCPB.exists():
        print("skip  mcpb validate: the MCPB command line is not installed (make interop installs it with npm)")
        return 0
    broken = bundle / "broken" / "manifest.json"
    broken.parent.mkdir()
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    broken.write_text(json.dumps({**manifest, "server": {**manifest["server"], "type": "ruby"}}), encoding="utf-8")
    said = {path: subprocess.run([str(MCPB), "validate", str(path)], capture_output=True, text=True, timeout=60)
            for path in (bundle / "manifest.json", broken)}
    good, bad = said.values()
    if good.returncode == 0 and bad.returncode != 0:
        print(f"ok    mcpb validate passes the bundle's manifest ({good.stdout.strip()}) and refuses a broken one")
        return 0
    print(f"FAIL  mcpb validate: the manifest gave {good.returncode}, a broken one {bad.returncode}\n"
          f"{good.stdout}{good.stderr}")
    return 1


def vault_copy(tmp: str) -> Path:
    vault = Path(tmp) / "vault"
    if not vault.exists():
        shutil.copytree(SAMPLE_VAULT, vault)
    return vault


if __name__ == "__main__":
    sys.exit(main())
