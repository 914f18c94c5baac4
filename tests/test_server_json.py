"""steps/server.json, the entry for the MCP registry (github.com/modelcontextprotocol/registry,
schema 2025-12-11): the fields its schema requires and allows, within its limits, and
saying what the server and pyproject.toml say: the same version, the package pip
builds, variables the server reads. Started as the entry says, the server answers."""
import json
import re
import shutil
import subprocess
import sys
import tomllib

from helpers import rpc
from launch import quiet_environment
from manifest import SAMPLE_VAULT, STEPS_DIR, load_steps
from test_package import shape_problems

ROOT = STEPS_DIR.parent
STEP = load_steps()[-1]
ENTRY = json.loads((STEPS_DIR / "server.json").read_text(encoding="utf-8"))
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

# The schema's ServerDetail, in test_package.shape_problems' notation ("!": required).
FORMATS = {"string", "number", "boolean", "filepath"}
INPUT = {"description": str, "isRequired": bool, "format": FORMATS, "default": str, "isSecret": bool,
         "choices": [str], "placeholder": str, "value": str, "variables": {str: dict}}
ARGUMENT = {**INPUT, "type!": {"positional", "named"}, "name": str, "valueHint": str, "isRepeated": bool}
KEY_VALUE = {**INPUT, "name!": str}
TRANSPORT = {"type!": {"stdio", "streamable-http", "sse"}, "url": str, "headers": [KEY_VALUE]}
SHAPE = {
    "$schema": str, "_meta": dict, "name!": str, "title": str, "description!": str, "version!": str,
    "websiteUrl": str, "repository": {"url!": str, "source!": str, "id": str, "subfolder": str},
    "icons": [{"src!": str, "mimeType": str, "sizes": [str], "theme": {"light", "dark"}}],
    "packages": [{"registryType!": str, "identifier!": str, "transport!": TRANSPORT, "version": str,
                  "registryBaseUrl": str, "runtimeHint": str, "fileSha256": str, "runtimeArguments": [ARGUMENT],
                  "packageArguments": [ARGUMENT], "environmentVariables": [KEY_VALUE]}],
    "remotes": [{**TRANSPORT, "variables": {str: dict}}],
}


def test_the_entry_has_the_fields_the_schema_requires_and_no_others():
    assert shape_problems(ENTRY, SHAPE, "server.json") == []
    assert ENTRY["$schema"].endswith("/2025-12-11/server.schema.json")


def test_the_entry_keeps_the_schemas_limits():
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", ENTRY["name"]) and 3 <= len(ENTRY["name"]) <= 200
    assert 1 <= len(ENTRY["description"]) <= 100 and 1 <= len(ENTRY["title"]) <= 100
    for package in ENTRY["packages"]:
        # A positional argument needs a value or a hint; a version is exact, never a range.
        assert all("value" in argument or "valueHint" in argument for argument in package["packageArguments"]
                   if argument["type"] == "positional")
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", package["version"])


def test_the_shape_check_finds_a_missing_field_and_a_wrong_transport():
    broken = {"name": "x/y", "version": "1", "packages": [{"registryType": "pypi", "transport": {"type": "tcp"}}]}
    assert shape_problems(broken, SHAPE, "server.json") == [
        "server.json has no description",
        "server.json.packages[0] has no identifier",
        "server.json.packages[0].transport.type is 'tcp', not one of ['sse', 'stdio', 'streamable-http']",
    ]


def test_the_entry_says_what_the_server_and_pyproject_say():
    said = subprocess.run([sys.executable, str(STEP.server), "--version"], capture_output=True, text=True).stdout
    name, version = said.split()
    (package,) = ENTRY["packages"]
    assert ENTRY["version"] == package["version"] == PROJECT["version"] == version
    assert package["identifier"] == PROJECT["name"] == name and "vault-mcp" in PROJECT["scripts"]
    assert ENTRY["title"] == "Obsidian vault"


def test_every_variable_is_one_the_server_reads_with_its_choices_and_default():
    help_text = " ".join(subprocess.run([sys.executable, str(STEP.server), "--help"], capture_output=True,
                                        text=True, env=quiet_environment("unused") | {"VAULT_MCP_EMBEDDER": ""}
                                        ).stdout.split())
    for variable in ENTRY["packages"][0]["environmentVariables"]:
        assert f"[{variable['name']}" in help_text, variable["name"]
        if "default" in variable:
            assert f"[{variable['name']}] (default: {variable['default']})" in help_text, variable
        if "choices" in variable:
            assert "{" + ",".join(variable["choices"]) + "}" in help_text, variable


def test_started_as_the_entry_says_the_server_answers(tmp_path):
    """The package's arguments after the command, its required variables set."""
    (package,) = ENTRY["packages"]
    arguments = [argument["value"] for argument in package["packageArguments"]]
    required = [variable["name"] for variable in package["environmentVariables"] if variable.get("isRequired")]
    assert required == ["VAULT_MCP_VAULT"]
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    initialize = rpc("initialize", protocolVersion="2025-11-25", capabilities={},
                     clientInfo={"name": "pytest", "version": "1"})
    done = subprocess.run([sys.executable, str(STEP.server), *arguments], input=json.dumps(initialize) + "\n",
                          capture_output=True, text=True, timeout=30,
                          env=quiet_environment(str(tmp_path / "index")) | {"VAULT_MCP_VAULT": str(vault)})
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "vault-mcp", done.stderr
