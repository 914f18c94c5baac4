"""make bundle and make pyz: the newest step as one file a user installs or runs.

    python3 steps/package.py bundle   dist/obsidian-vault.mcpb, for Claude Desktop
    python3 steps/package.py pyz      dist/obsidian-vault.pyz, for any other client

The bundle is an MCP Bundle (the format of github.com/modelcontextprotocol/mcpb): a
zip with manifest.json at its root, which tells the client how to start the server
and which settings to ask the user for, and the server's files under server/. The
.pyz is a zip Python runs as a program (zipapp): the same files, and a __main__.py
that starts the server.

Both come out byte for byte the same from the same commit: the entries are written
in sorted order, each with one fixed date and mode, so a rebuild changes nothing
and a changed byte means a changed file.
"""
import argparse
import importlib
import io
import json
import os
import subprocess
import sys
import zipapp
import zipfile
from pathlib import Path

import manifest
from manifest import STEPS_DIR, load_steps

DIST = STEPS_DIR.parent / "dist"
BUNDLE_NAME = "obsidian-vault.mcpb"
PYZ_NAME = "obsidian-vault.pyz"
LAUNCHER = "find_python.sh"  # the bundle starts the server through it, on macOS and Linux
MANIFEST_VERSION = "0.3"  # the current version of the MCPB manifest spec (MANIFEST.md)
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip can hold: no build time leaks in
PYZ_MAIN = """\
import os
import sys

# The server's modules are in server/, beside data/, as in the bundle: ../data from them.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "server"))
import server  # noqa: E402

server.main()
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="+", choices=["bundle", "pyz"])
    parser.add_argument("--dist", type=Path, default=DIST, help="the folder to write to (default: dist/)")
    args = parser.parse_args()
    args.dist.mkdir(parents=True, exist_ok=True)
    for kind in args.kinds:
        path = build_bundle(args.dist) if kind == "bundle" else build_pyz(args.dist)
        shown = path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path
        print(f"wrote {shown} ({path.stat().st_size:,} bytes)")


def server_files() -> dict[str, Path]:
    """Every file both archives carry, by its path under steps/: the newest step's
    Python files, and the shared data steps.toml names under [data]."""
    step = newest_step_folder()
    files = [*step.glob("*.py"), step / LAUNCHER]
    for name in shared_data():
        source = STEPS_DIR / name
        files += [source] if source.is_file() else [path for path in sorted(source.rglob("*"))
                                                     if path.is_file() and "__pycache__" not in path.parts]
    return {path.relative_to(STEPS_DIR).as_posix(): path for path in files}


def archive_entries(server_folder: str) -> dict[str, bytes]:
    """server_files() by name in an archive: the step's own files in server_folder
    ("" for the top), the shared data where steps/ has it, so that the server finds
    ../data/x in an unpacked bundle as it does in the repository."""
    step = newest_step_folder().name + "/"
    return {server_folder + name.removeprefix(step) if name.startswith(step) else name: path.read_bytes()
            for name, path in server_files().items()}


def shared_data() -> list[str]:
    """The files under steps/ that the steps share ([data] in steps.toml): the data
    the server reads, and its licence and origin, which travel with it."""
    folder, files, origin = manifest.shared_data()
    return [(folder / name).relative_to(STEPS_DIR).as_posix() for name in [*files, *origin]]


def newest_step_folder() -> Path:
    return load_steps()[-1].path


def write_zip(target, entries: dict[str, bytes]) -> None:
    """A zip of entries in name order, each dated ZIP_DATE with mode rw-r--r--: the
    same entries always give the same bytes, whenever and wherever it is built."""
    with zipfile.ZipFile(target, "w") as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, on every system: the mode below means the same
            info.external_attr = 0o644 << 16
            archive.writestr(info, entries[name])


def build_bundle(dist: Path) -> Path:
    entries = archive_entries("server/")
    entries["manifest.json"] = (json.dumps(bundle_manifest(), indent=2, ensure_ascii=False) + "\n").encode()
    target = dist / BUNDLE_NAME
    write_zip(target, entries)
    return target


def build_pyz(dist: Path) -> Path:
    """zipapp adds the #! line and makes the file executable; the zip inside is ours,
    so that its order and dates are fixed too."""
    entries = archive_entries("server/")
    entries["__main__.py"] = PYZ_MAIN.encode()
    inner = io.BytesIO()
    write_zip(inner, entries)
    inner.seek(0)
    target = dist / PYZ_NAME
    # A str, not a Path: zipapp makes only a target named by a str executable.
    zipapp.create_archive(inner, str(target), interpreter="/usr/bin/env python3")
    return target


def bundle_manifest() -> dict:
    name, version = server_version()
    server, tools = load_step_modules("server", "tools")
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": name,
        "display_name": "Obsidian vault",
        "version": version,
        "description": "Search, read and link the notes of an Obsidian vault, save new ones to its "
                       "inbox, and edit, move or delete notes safely, each write undoable. Python's "
                       "standard library only: nothing to install.",
        "author": {"name": "vault-mcp-guide"},
        "license": "MIT",
        "icon": "data/icon-512.png",  # shared data (steps.toml): at data/ in the bundle
        "keywords": ["obsidian", "notes", "markdown", "search"],
        "server": {"type": "python", "entry_point": "server/server.py", "mcp_config": start_command(server)},
        "tools": [{"name": tool.name, "description": tool.description} for tool in tools.TOOLS.values()],
        "compatibility": {"platforms": ["darwin", "win32", "linux"], "runtimes": {"python": ">=3.11"}},
        "user_config": settings_form(server),
    }


def optional_settings(server) -> dict[str, tuple[str, str]]:
    """The options the user may change in Claude Desktop, besides the vault: title, description."""
    return {
        "inbox": ("Inbox folder", "The folder of the vault where new notes are saved"),
        "embedder": ("Embedder", f"How notes become vectors for search: {', '.join(server.KINDS)} "
                                 "(auto: Ollama if it answers, else the offline static table)"),
        "model": ("Ollama model", "The embedding model Ollama runs, when the embedder is Ollama"),
        "exclude": ("Private folders", "Folders of the vault the assistant must never see, as if they did not "
                                       "exist; separate several with ':' (';' on Windows)"),
        "read_only": ("Read only", "Offer no tool that writes: no new note, no edit, no move, no delete"),
        "write_folder": ("Folders to write in", "Folders of the vault the assistant may change notes in, and no "
                                                "others; separate several with ':' (';' on Windows); empty: any"),
    }


def start_command(server) -> dict:
    """How the client starts the server, with ${...} for what it fills in. Not with
    the python3 the client finds, which may be too old: through a launcher that looks
    for a Python 3.11 or newer where installers put one (find_python.sh)."""
    arguments = ["--stdio", "--vault", "${user_config.vault}"]
    return {
        "command": "/bin/sh",
        "args": [f"${{__dirname}}/server/{LAUNCHER}", *arguments],
        # The optional settings travel as variables: a client leaves an argument it
        # has no value for as the literal ${...}, but a variable it sets to "" is one
        # the server counts as unset, so its own default applies.
        "env": {server.env_variable(f"--{key}"): f"${{user_config.{key}}}" for key in optional_settings(server)},
        # Windows has no sh, and its python may be the Store's stub; python.org's
        # installer puts py there, which starts the newest Python 3 installed.
        "platform_overrides": {"win32": {"command": "py",
                                         "args": ["-3", "${__dirname}/server/server.py", *arguments]}},
    }


def settings_form(server) -> dict:
    """What the client asks the user: the vault, with a folder picker, and the
    optional settings, each showing the server's own default."""
    defaults = server.parse_args(["--stdio"])
    form = {"vault": {"type": "directory", "title": "Vault", "description": "The folder of your Obsidian vault",
                      "required": True}}
    for key, (title, description) in optional_settings(server).items():
        default = getattr(defaults, key)
        if isinstance(default, bool):  # --read-only: a switch, which its variable spells "true"
            form[key] = {"type": "boolean", "title": title, "description": description, "required": False,
                         "default": default}
            continue
        if isinstance(default, list):  # --exclude, --write-folder: a list, which its variable spells joined
            default = os.pathsep.join(default)
        form[key] = {"type": "string", "title": title, "description": description, "required": False,
                     "default": str(default)}
    return form


def server_version() -> tuple[str, str]:
    """The name and version the server itself prints for --version: the one place both are kept."""
    output = subprocess.run([sys.executable, str(newest_step_folder() / "server.py"), "--version"],
                            capture_output=True, text=True, check=True).stdout
    name, version = output.split()
    return name, version


def load_step_modules(*names: str) -> list:
    """The newest step's modules, imported for its tools, its options and their
    defaults. A VAULT_MCP_ variable in the builder's environment would change those
    defaults, so they are set aside first: the bundle is the same wherever it is built."""
    for variable in [name for name in os.environ if name.startswith("VAULT_MCP_")]:
        del os.environ[variable]
    sys.path.insert(0, str(newest_step_folder()))
    return [importlib.import_module(name) for name in names]


if __name__ == "__main__":
    main()
