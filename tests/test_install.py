"""`pip install .` as a user runs it: into a fresh virtual environment, from a copy of
the files pyproject.toml names, with pip's own isolated build. The command it makes,
vault-mcp, serves a vault over stdio with the data it carries, and no module of the
step lands at the top of site-packages, where names like `tools` would clash."""
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

from helpers import StdioServer, rpc
from launch import quiet_environment
from manifest import SAMPLE_VAULT, STEPS_DIR, load_steps

ROOT = STEPS_DIR.parent
STEP = load_steps()[-1]
BIN = "Scripts" if sys.platform == "win32" else "bin"

pytestmark = pytest.mark.slow  # a virtual environment and a build: about 15 s


def source_copy(target: Path) -> Path:
    """pyproject.toml, the README it names and the folders it packs: what a build reads.
    A copy, because setuptools writes build/ beside pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    shutil.copy(ROOT / project["project"]["readme"], target / project["project"]["readme"])
    for folder in project["tool"]["setuptools"]["package-dir"].values():
        shutil.copytree(ROOT / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment with `pip install .` done in it; its folder."""
    tmp = tmp_path_factory.mktemp("install")
    source = source_copy(tmp_path_factory.mktemp("source"))
    venv.create(tmp / "venv", with_pip=True)
    python = tmp / "venv" / BIN / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
                           str(source)], capture_output=True, text=True, timeout=300)
    if done.returncode and "satisfies the requirement setuptools" in done.stdout + done.stderr:
        pytest.skip("pip could not fetch setuptools to build with (offline?)")
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp / "venv"


def site_packages(environment: Path) -> Path:
    found = subprocess.run([str(environment / BIN / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return Path(found)


def test_the_command_says_the_version_of_the_step(installed):
    expected = subprocess.run([sys.executable, str(STEP.server), "--version"], capture_output=True, text=True).stdout
    said = subprocess.run([str(installed / BIN / "vault-mcp"), "--version"], capture_output=True, text=True, timeout=30)
    assert said.stdout == expected, said.stderr
    assert expected.split()[1] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_help_of_the_command_names_no_practice_vault(installed):
    """Only a clone of the repository has practice vaults: the installed command's --help
    says a vault must be given, as the command itself does when started without one."""
    said = subprocess.run([str(installed / BIN / "vault-mcp"), "--help"], capture_output=True, text=True, timeout=30)
    assert "none; give your vault" in said.stdout and "steps/scratch" not in said.stdout, said.stdout


def test_nothing_of_the_step_lands_at_the_top_of_site_packages(installed):
    top = {path.name for path in site_packages(installed).iterdir()}
    assert "vault_mcp" in top
    step_modules = {path.name for path in STEP.path.glob("*.py")}
    assert "tools.py" in step_modules and not step_modules & top, step_modules & top
    assert {"data", "server"} & top == set()


def test_vault_mcp_serves_a_vault_over_stdio(installed, tmp_path):
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    command = [str(installed / BIN / "vault-mcp"), "--vault", str(vault), "--stdio", "--embedder", "static"]
    # From a folder with no repository above it: the command needs nothing but itself.
    environment = quiet_environment(str(tmp_path / "index")) | {"PYTHONPATH": ""}
    server = StdioServer(command=command, env=environment)
    try:
        reply = server.ask(rpc("initialize", protocolVersion="2025-11-25", capabilities={},
                               clientInfo={"name": "pytest", "version": "1"}))
        assert reply["result"]["serverInfo"]["name"] == "vault-mcp"
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send(rpc("tools/call", id=2, name="get_note", arguments={"path": "Ferments/Crème fraîche"}))
        note = server.answer(2)["result"]
        assert note["isError"] is False and note["structuredContent"]["path"] == "Ferments/Crème fraîche.md"
        # The static table is read from the installed package's data folder.
        server.send(rpc("tools/call", id=3, name="search_vault",
                        arguments={"query": "crème fraîche", "mode": "semantic"}))
        found = server.answer(3)["result"]["structuredContent"]["results"]
        assert "Ferments/Crème fraîche.md" in [hit["path"] for hit in found[:3]], found
    finally:
        server.stop()


def test_vault_mcp_without_a_vault_says_to_give_one(installed, tmp_path):
    done = subprocess.run([str(installed / BIN / "vault-mcp"), "--stdio"], capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL, cwd=tmp_path,
                          env=quiet_environment(str(tmp_path / "index")))
    assert done.returncode == 1 and "--vault" in done.stderr and "steps.toml" not in done.stderr, done.stderr
