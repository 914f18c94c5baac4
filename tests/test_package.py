"""make bundle and make pyz (steps/package.py): the same bytes from the same files, a
manifest of the MCPB shape that says what the server is, every module the server
imports inside, and both archives started as a user would start them, answering
over stdio. The official tools (mcpb validate, the SDK's client) drive the same
archives in make interop."""
import base64
import importlib.util
import json
import modulefinder
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import StdioServer, rpc
from launch import quiet_environment
from manifest import SAMPLE_VAULT, STEPS_DIR, load_steps, shared_data
from mcpb_client import build, launch_command, old_python_machine, unpack

STEP = load_steps()[-1]
BUNDLE, PYZ = "obsidian-vault.mcpb", "obsidian-vault.pyz"
ICON = STEPS_DIR / "data" / "icon-64.png"  # the one serverInfo carries
INITIALIZE = rpc("initialize", protocolVersion="2025-11-25", capabilities={},
                 clientInfo={"name": "pytest", "version": "1"})

# The manifest of MCPB version 0.3, as its MANIFEST.md describes it. A dict of names
# is an object with those fields and no others ("!" marks a required one); {str: X}
# is an object of any names, each an X; [X] a list of X; a set, the strings allowed;
# a type or a tuple of types, what the value is.
PLATFORMS = {"darwin", "win32", "linux"}
LAUNCH = {"command": str, "args": [str], "env": {str: str}}
SHAPE = {
    "$schema": str, "manifest_version!": {"0.3"}, "name!": str, "display_name": str, "version!": str,
    "description!": str, "long_description": str, "author!": {"name!": str, "email": str, "url": str},
    "repository": {"type!": str, "url!": str}, "homepage": str, "documentation": str, "support": str,
    "icon": str, "screenshots": [str], "keywords": [str], "license": str, "privacy_policies": [str],
    "server!": {"type!": {"python", "node", "binary"}, "entry_point!": str,
                "mcp_config!": {**LAUNCH, "command!": str, "platform_overrides": {str: LAUNCH}}},
    "tools": [{"name!": str, "description": str}], "tools_generated": bool,
    "prompts": [{"name!": str, "description": str, "arguments": [str], "text!": str}], "prompts_generated": bool,
    "compatibility": {"claude_desktop": str, "platforms": [PLATFORMS], "runtimes": {"python": str, "node": str}},
    "user_config": {str: {"type!": {"string", "number", "boolean", "directory", "file"}, "title!": str,
                          "description!": str, "required": bool, "default": (str, int, float, bool, list),
                          "multiple": bool, "sensitive": bool, "min": (int, float), "max": (int, float)}},
}


def shape_problems(value, shape=SHAPE, where="manifest") -> list[str]:
    if isinstance(shape, set):
        return [] if value in shape else [f"{where} is {value!r}, not one of {sorted(shape)}"]
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [f"{where} is not a list"]
        return [problem for i, item in enumerate(value) for problem in shape_problems(item, shape[0], f"{where}[{i}]")]
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return [f"{where} is not an object"]
        if list(shape) == [str]:
            return [problem for key, item in value.items() for problem in shape_problems(item, shape[str], f"{where}.{key}")]
        fields = {name.rstrip("!"): field for name, field in shape.items()}
        problems = [f"{where} has no {name[:-1]}" for name in shape if name.endswith("!") and name[:-1] not in value]
        problems += [f"{where} has {key}, which the spec does not know" for key in value if key not in fields]
        return problems + [problem for key, item in value.items() if key in fields
                           for problem in shape_problems(item, fields[key], f"{where}.{key}")]
    kinds = " or ".join(kind.__name__ for kind in (shape if isinstance(shape, tuple) else (shape,)))
    return [] if isinstance(value, shape) else [f"{where} is {type(value).__name__}, not {kinds}"]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dist")
    build(folder, "bundle", "pyz")
    return folder


@pytest.fixture(scope="module")
def bundle_manifest(dist) -> dict:
    with zipfile.ZipFile(dist / BUNDLE) as archive:
        return json.loads(archive.read("manifest.json"))


@pytest.fixture
def vault(tmp_path) -> Path:
    shutil.copytree(SAMPLE_VAULT, tmp_path / "vault")
    return tmp_path / "vault"


def test_the_same_files_give_the_same_bytes_in_a_fixed_order_and_date(dist, tmp_path):
    """Built again, later, by someone whose environment sets the server's options."""
    build(tmp_path, "bundle", "pyz", env={**os.environ, "VAULT_MCP_INBOX": "Mine", "VAULT_MCP_EMBEDDER": "hash"})
    for name in (BUNDLE, PYZ):
        assert (tmp_path / name).read_bytes() == (dist / name).read_bytes(), name
        with zipfile.ZipFile(dist / name) as archive:
            entries = archive.infolist()
        assert [entry.filename for entry in entries] == sorted(entry.filename for entry in entries)
        assert {entry.date_time for entry in entries} == {(1980, 1, 1, 0, 0, 0)}


def test_the_manifest_has_the_shape_of_the_spec(bundle_manifest):
    assert shape_problems(bundle_manifest) == []


def test_the_shape_check_finds_what_is_missing_unknown_or_wrong():
    broken = {"manifest_version": "0.3", "name": "x", "version": "1", "description": "d", "colour": "red",
              "server": {"type": "ruby", "entry_point": "x.rb", "mcp_config": {"args": ["x.rb"]}},
              "user_config": {"vault": {"type": "directory", "title": "Vault", "description": "v", "required": "yes"}}}
    assert shape_problems(broken) == [
        "manifest has no author",
        "manifest has colour, which the spec does not know",
        "manifest.server.type is 'ruby', not one of ['binary', 'node', 'python']",
        "manifest.server.mcp_config has no command",
        "manifest.user_config.vault.required is str, not bool",
    ]


def test_the_manifest_says_what_the_server_says_of_itself(bundle_manifest):
    said = subprocess.run([sys.executable, str(STEP.server), "--version"], capture_output=True, text=True).stdout
    assert f"{bundle_manifest['name']} {bundle_manifest['version']}" == said.strip()
    assert bundle_manifest["compatibility"] == {"platforms": ["darwin", "win32", "linux"],
                                                "runtimes": {"python": ">=3.11"}}
    settings = bundle_manifest["user_config"]
    assert settings["vault"] == {**settings["vault"], "type": "directory", "required": True}
    assert [key for key, option in settings.items() if "default" not in option] == ["vault"]
    config = json.dumps(bundle_manifest["server"]["mcp_config"])
    assert {key for key in settings if "${user_config.%s}" % key in config} == set(settings)


def test_both_archives_hold_every_module_the_server_imports(dist):
    finder = modulefinder.ModuleFinder(path=[str(STEP.path)])
    finder.run_script(str(STEP.server))
    imported = {Path(module.__file__).name for module in finder.modules.values()
                if module.__file__ and Path(module.__file__).parent == STEP.path}
    folder, files, origin = shared_data()
    shared = {(folder / name).relative_to(STEPS_DIR).as_posix() for name in [*files, *origin]}
    assert "data/minilm-static.bin" in shared
    assert "tools.py" in imported and "server.py" in imported
    for name, prefix in ((BUNDLE, "server/"), (PYZ, "server/")):
        with zipfile.ZipFile(dist / name) as archive:
            names = set(archive.namelist())
        assert {prefix + module for module in imported} <= names, name
        assert shared <= names, name


def test_shared_data_named_in_steps_toml_goes_where_the_server_looks_for_it(monkeypatch):
    """steps/data/x, read by the newest step as ../data/x: in the bundle, the step's
    files are in server/ and x at data/x, so ../ from server/ finds it there too."""
    import package
    monkeypatch.setattr(package, "shared_data", lambda: ["sample-vault/Ferments", "sample-vault/Home.md"])
    shared = sorted(path.relative_to(STEPS_DIR).as_posix() for path in (SAMPLE_VAULT / "Ferments").rglob("*.md"))
    for folder, step_file in (("server/", "server/server.py"), ("", "server.py")):
        entries = package.archive_entries(folder)
        assert entries[step_file] == STEP.server.read_bytes()
        for name in [*shared, "sample-vault/Home.md"]:
            assert entries[name] == (STEPS_DIR / name).read_bytes(), name
        assert not [name for name in entries if name.startswith(STEP.folder)]


def conversation(server: StdioServer) -> list[str]:
    """The handshake, then tools/list; the names and descriptions of the tools."""
    assert server.ask(INITIALIZE)["result"]["serverInfo"]["name"] == "vault-mcp"
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server.ask(rpc("tools/list", id=2))["result"]["tools"]


def call(server: StdioServer, name: str, **arguments) -> dict:
    """The tool's result. The watcher may tell of a change first: such a notification
    is passed over (a few at most) on the way to the answer."""
    server.send(rpc("tools/call", id=3, name=name, arguments=arguments))
    for _ in range(20):
        reply = server.read()
        if reply.get("id") == 3:
            assert reply["result"]["isError"] is False, reply
            return reply["result"]["structuredContent"]
        assert "id" not in reply, reply  # only notifications may come between
    pytest.fail("no answer among twenty messages")


def test_the_pyz_runs_alone_and_answers_over_stdio(dist, vault, tmp_path):
    pyz = tmp_path / "elsewhere" / PYZ  # away from the steps, so nothing is found but what it holds
    pyz.parent.mkdir()
    shutil.copy(dist / PYZ, pyz)
    command = [sys.executable, "-I", str(pyz), "--vault", str(vault), "--stdio"]
    server = StdioServer(command=command, env=quiet_environment(str(tmp_path / "index")))
    try:
        icons = server.ask(INITIALIZE)["result"]["serverInfo"]["icons"]  # read from inside the zip
        assert icons == [{"src": "data:image/png;base64," + base64.b64encode(ICON.read_bytes()).decode(),
                          "mimeType": "image/png", "sizes": ["%dx%d" % png_size(ICON.read_bytes())]}]
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert [tool["name"] for tool in server.ask(rpc("tools/list", id=2))["result"]["tools"]][:2] == [
            "list_notes", "get_note"]
        assert call(server, "get_note", path="Ferments/Crème fraîche")["path"] == "Ferments/Crème fraîche.md"
    finally:
        server.stop()


def test_the_pyz_reads_the_static_table_from_inside_itself(dist, vault, tmp_path):
    """The offline default embedder's table is in the zip, where open() cannot reach."""
    pyz = tmp_path / "elsewhere" / PYZ
    pyz.parent.mkdir()
    shutil.copy(dist / PYZ, pyz)
    command = [sys.executable, "-I", str(pyz), "--vault", str(vault), "--stdio", "--embedder", "static"]
    server = StdioServer(command=command, env=quiet_environment(str(tmp_path / "index")))
    try:
        conversation(server)
        found = call(server, "search_vault", query="crème fraîche", mode="semantic")["results"]
        assert "Ferments/Crème fraîche.md" in [hit["path"] for hit in found[:3]], found
    finally:
        server.stop()


def test_the_pyz_reads_the_confusables_table_from_inside_itself(dist, vault, tmp_path):
    """create_note refuses a look-alike title with the table the zip holds (lookalikes.py)."""
    pyz = tmp_path / "elsewhere" / PYZ
    pyz.parent.mkdir()
    shutil.copy(dist / PYZ, pyz)
    command = [sys.executable, "-I", str(pyz), "--vault", str(vault), "--stdio"]
    server = StdioServer(command=command, env=quiet_environment(str(tmp_path / "index")))
    try:
        conversation(server)
        assert call(server, "create_note", title="Idea", content="The first.")["path"] == "Inbox/Idea.md"
        server.send(rpc("tools/call", id=9, name="create_note", arguments={"title": "Id\u0435a", "content": "x"}))
        refused = next(reply for reply in iter(server.read, None) if reply.get("id") == 9)["result"]
        assert refused["isError"] and 'looks just like the note "Inbox/Idea.md"' in refused["content"][0]["text"]
    finally:
        server.stop()


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, after checking the signature."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_the_bundle_carries_its_icon_where_the_manifest_says(dist, bundle_manifest):
    with zipfile.ZipFile(dist / BUNDLE) as archive:
        icon = archive.read(bundle_manifest["icon"])
    assert png_size(icon) == (512, 512)  # the size Claude Desktop asks for


def test_the_icons_are_what_draw_icon_draws():
    """steps/data/draw_icon.py, run again, gives the bytes checked in (the small one: the big one takes seconds)."""
    spec = importlib.util.spec_from_file_location("draw_icon", STEPS_DIR / "data" / "draw_icon.py")
    draw_icon = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(draw_icon)
    assert draw_icon.png(64) == ICON.read_bytes()


def test_the_embedder_setting_names_the_fallback_the_server_uses(bundle_manifest):
    said = bundle_manifest["user_config"]["embedder"]["description"]
    assert "else the offline static table" in said and "hashing" not in said, said


def test_the_pyz_without_a_vault_says_to_give_one(dist, tmp_path):
    """Away from the repository there is no practice vault: the message names --vault, not steps.toml."""
    done = subprocess.run([sys.executable, "-I", str(dist / PYZ), "--stdio"], capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL, cwd=tmp_path,
                          env=quiet_environment(str(tmp_path / "index")))
    assert done.returncode == 1
    assert "--vault" in done.stderr and "steps.toml" not in done.stderr, done.stderr


def test_the_pyz_says_its_version_and_refuses_a_vault_that_is_not_there(dist, tmp_path):
    expected = subprocess.run([sys.executable, str(STEP.server), "--version"], capture_output=True, text=True).stdout
    assert subprocess.run([sys.executable, str(dist / PYZ), "--version"], capture_output=True, text=True).stdout == expected
    if sys.platform != "win32":  # run as a program, by its #! line
        assert subprocess.run([str(dist / PYZ), "--version"], capture_output=True, text=True).stdout == expected
    missing = subprocess.run([sys.executable, str(dist / PYZ), "--vault", str(tmp_path / "nowhere"), "--stdio"],
                             capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
                             env=quiet_environment(str(tmp_path / "index")))
    assert missing.returncode == 1
    assert missing.stderr.startswith(f"Cannot open the vault {tmp_path / 'nowhere'}")


@pytest.mark.parametrize("inbox, folder", [("", "Inbox"), ("Drafts", "Drafts")], ids=["cleared", "chosen"])
def test_the_bundle_starts_as_its_manifest_says_and_writes_to_the_inbox_the_user_set(
        dist, vault, tmp_path, bundle_manifest, inbox, folder):
    """A setting the user cleared reaches the server as an empty variable, and the
    server's own default applies; one the user chose is where create_note writes."""
    unpacked = tmp_path / "installed"
    unpack(dist / BUNDLE, unpacked)
    command, env = launch_command(bundle_manifest, unpacked, {"vault": str(vault), "embedder": "hash", "inbox": inbox})
    assert command[:3] == ["/bin/sh", str(unpacked / "server" / "find_python.sh"), "--stdio"]
    server = StdioServer(command=command, env=quiet_environment(str(tmp_path / "index")) | env)
    try:
        tools = conversation(server)
        assert [{"name": tool["name"], "description": tool["description"]} for tool in tools] == bundle_manifest["tools"]
        made = call(server, "create_note", title="From the bundle", content="Written by a test.")
    finally:
        server.stop()
    assert made["path"] == f"{folder}/From the bundle.md"
    assert (vault / folder / "From the bundle.md").is_file()


def test_on_windows_the_bundle_starts_the_server_with_py(bundle_manifest, tmp_path):
    """No sh there, and python may be the Store's stub: py -3, python.org's launcher, runs server.py."""
    command, _ = launch_command(bundle_manifest, tmp_path, {"vault": "C:\\Notes"}, platform="win32")
    assert command == ["py", "-3", f"{tmp_path}/server/server.py", "--stdio", "--vault", "C:\\Notes"]


def test_the_private_folders_a_user_sets_in_the_bundle_are_never_listed(dist, vault, tmp_path, bundle_manifest):
    assert bundle_manifest["user_config"]["exclude"]["default"] == ""  # none unless the user names some
    unpacked = tmp_path / "installed"
    unpack(dist / BUNDLE, unpacked)
    folders = os.pathsep.join(["Journal", "Reading"])
    command, env = launch_command(bundle_manifest, unpacked, {"vault": str(vault), "embedder": "hash",
                                                             "exclude": folders})
    server = StdioServer(command=command, env=quiet_environment(str(tmp_path / "index")) | env)
    try:
        conversation(server)
        listed = call(server, "list_notes", limit=200)["notes"]
    finally:
        server.stop()
    assert listed and not [note for note in listed if note.startswith(("Journal/", "Reading/"))]


@pytest.mark.skipif(sys.platform == "win32", reason="the bundle starts through py on Windows")
def test_the_bundle_finds_a_newer_python_where_homebrew_puts_it_when_python3_is_old(
        dist, vault, tmp_path, bundle_manifest):
    machine = old_python_machine(tmp_path / "machine")
    unpack(dist / BUNDLE, tmp_path / "installed")
    command, env = launch_command(bundle_manifest, tmp_path / "installed", {"vault": str(vault)})
    server = StdioServer(command=command, env=quiet_environment(str(tmp_path / "index")) | env | machine)
    try:
        conversation(server)
        assert call(server, "get_note", path="Ferments/Crème fraîche")["path"] == "Ferments/Crème fraîche.md"
    finally:
        server.stop()


@pytest.mark.skipif(sys.platform == "win32", reason="the bundle starts through py on Windows")
def test_without_a_new_enough_python_the_bundle_says_where_it_looked_and_what_to_install(
        dist, vault, tmp_path, bundle_manifest):
    machine = old_python_machine(tmp_path / "machine", newer_in=None)
    unpack(dist / BUNDLE, tmp_path / "installed")
    command, env = launch_command(bundle_manifest, tmp_path / "installed", {"vault": str(vault)})
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
                          env=quiet_environment(str(tmp_path / "index")) | env | machine)
    assert done.returncode == 1 and done.stdout == ""
    assert f"{machine['PATH']}/python3 is 3.9" in done.stderr
    assert f"{machine['VAULT_MCP_SEARCH_ROOT']}/opt/homebrew/bin" in done.stderr and "python.org" in done.stderr, done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="sh and symbolic links")
@pytest.mark.parametrize("place", ["Library/Frameworks/Python.framework/Versions/3.12/bin", "usr/local/bin",
                                   "~/.pyenv/versions/3.12.4/bin", "~/.local/share/uv/python/cpython-3.13.1-macos/bin"])
def test_the_launcher_finds_a_python_in_each_place_installers_use(tmp_path, place):
    """Named python3.12, as installers name it: found before the old python3 of PATH."""
    machine = old_python_machine(tmp_path / "machine", newer_in=None)
    home, root = Path(machine["HOME"]), Path(machine["VAULT_MCP_SEARCH_ROOT"])
    folder = home / place[2:] if place.startswith("~/") else root / place
    folder.mkdir(parents=True)
    (folder / "python3.12").symlink_to(os.path.realpath(sys.executable))
    launcher = STEP.path / "find_python.sh"
    done = subprocess.run(["/bin/sh", str(launcher), "--version"], capture_output=True, text=True, timeout=30,
                          env=machine)
    assert done.returncode == 0 and done.stdout.startswith("vault-mcp "), done.stderr
