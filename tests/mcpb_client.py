"""What a client does with an MCP Bundle before it starts the server: unpack it, read
manifest.json, and fill ${__dirname} and ${user_config.KEY} in its mcp_config.

The filling follows the reference implementation of the MCPB project
(getMcpConfigForManifest): a setting the user left alone takes the manifest's
default; in a string every known ${...} is replaced, "" included; an argument that
is a whole ${user_config.KEY} is replaced only by a value that is not empty, and
otherwise stays as written. Used by tests/test_package.py and tests/interop.py.
And a machine as Claude Desktop sees it when started from the Finder: an old python3
on PATH, a newer Python where Homebrew puts it.
"""
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "steps" / "package.py"
WHOLE_SETTING = re.compile(r"^\$\{(user_config\.[^}]+)\}$")


def build(dist: Path, *kinds: str, env: dict | None = None) -> None:
    """make bundle / make pyz, into dist."""
    subprocess.run([sys.executable, str(PACKAGE), *kinds, "--dist", str(dist)],
                   check=True, capture_output=True, timeout=60, env=env)


def unpack(bundle: Path, folder: Path) -> dict:
    """Unpack the bundle into folder; return its manifest."""
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(folder)
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def launch_command(manifest: dict, folder: Path, settings: dict, platform: str = sys.platform) -> tuple[list, dict]:
    """(command and arguments, environment variables) as a client would start the
    server of the bundle unpacked in folder, for the user's settings."""
    config = dict(manifest["server"]["mcp_config"])
    config.update(config.pop("platform_overrides", {}).get(platform, {}))
    values = {"__dirname": str(folder)}
    for key, option in manifest.get("user_config", {}).items():
        if key in settings or "default" in option:
            values[f"user_config.{key}"] = str(settings.get(key, option.get("default")))
    command = [fill(config["command"], values)] + [fill_argument(a, values) for a in config.get("args", [])]
    env = {name: fill(value, values) for name, value in config.get("env", {}).items()}
    return command, env


def fill(text: str, values: dict) -> str:
    for key, value in values.items():
        text = text.replace("${%s}" % key, value)
    return text


def fill_argument(argument: str, values: dict) -> str:
    whole = WHOLE_SETTING.match(argument)
    if whole:
        return values.get(whole.group(1)) or argument
    return fill(argument, values)


def old_python_machine(folder: Path, newer_in: str | None = "opt/homebrew/bin") -> dict:
    """The environment of a client on a machine whose PATH holds only a python3 that
    is 3.9 (a script that says so, whatever it is asked), with an empty home, and the
    Python running this in `newer_in` under folder/root, which the bundle's launcher
    searches instead of / (VAULT_MCP_SEARCH_ROOT). newer_in=None: no newer Python."""
    old, root, home = folder / "usr-bin", folder / "root", folder / "home"
    for made in (old, root, home):
        made.mkdir(parents=True)
    (old / "python3").write_text("#!/bin/sh\necho 3.9\n")
    (old / "python3").chmod(0o755)
    if newer_in:
        (root / newer_in).mkdir(parents=True)
        (root / newer_in / "python3").symlink_to(os.path.realpath(sys.executable))
    return {"PATH": str(old), "HOME": str(home), "VAULT_MCP_SEARCH_ROOT": str(root)}
