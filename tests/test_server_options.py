"""Step 10's options from the environment, at the edges: an empty variable, a value
the option does not offer. server.py is the only copy that reads them.

`--help` is enough to see how the options were read: argparse builds every option,
defaults from the environment included, before it prints the help and exits."""
import os
import subprocess
import sys

import pytest

from helpers import distinct_copies
from manifest import find_step

STEPS = [find_step(number) for number in distinct_copies("server.py", since=10)]


def run_help(step, **variables) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("VAULT_MCP_")}
    return subprocess.run([sys.executable, str(step.server), "--help"], capture_output=True, text=True,
                          timeout=30, env=environment | variables)


@pytest.mark.parametrize("step", STEPS, ids=lambda step: step.folder)
def test_an_empty_variable_counts_as_unset(step):
    """`VAULT_MCP_PORT= server.py` is how a shell unsets a variable for one command."""
    done = run_help(step, VAULT_MCP_PORT="", VAULT_MCP_EMBEDDER="", VAULT_MCP_SESSION_TIMEOUT="")
    assert done.returncode == 0, done.stderr
    help_text = " ".join(done.stdout.split())
    assert "[VAULT_MCP_PORT] (default: 3000)" in help_text
    assert "[VAULT_MCP_EMBEDDER] (default: auto)" in help_text
    assert "[VAULT_MCP_SESSION_TIMEOUT] (default: 1800)" in help_text


@pytest.mark.parametrize("step", STEPS, ids=lambda step: step.folder)
@pytest.mark.parametrize("variable,value", [("VAULT_MCP_EMBEDDER", "nope"), ("VAULT_MCP_LOG_LEVEL", "INFO")])
def test_a_variable_outside_the_options_choices_stops_the_server_with_one_line(step, variable, value):
    """argparse checks a flag against its choices, never a default: the variable's
    value is checked where it is read."""
    done = run_help(step, **{variable: value})
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{variable}={value!r} is not one of " in lines[0], lines
