"""--log-level, also from VAULT_MCP_LOG_LEVEL, and a flag that wins over the variable."""
from probe import expect, ok, run_copy

# The options the copy's server.py reads, with the variable set and without.
OPTIONS = """
import server
print(server.parse_args([]).log_level)
print(server.parse_args(["--log-level", "debug"]).log_level)
"""


def check(server):
    shown = run_copy(server.folder, ["server.py", "--help"])
    expect("--log-level" in shown.stdout,
           "server.py --help shows no --log-level: add it in parse_args (server.py) with option(...)")
    expect("VAULT_MCP_LOG_LEVEL" in shown.stdout,
           "--help does not name VAULT_MCP_LOG_LEVEL: add the option with option(...), which names its variable")
    ok("--help shows --log-level and its variable")
    done = run_copy(server.folder, ["-c", OPTIONS], env={"VAULT_MCP_LOG_LEVEL": "warning"})
    expect(done.returncode == 0, f"parse_args failed: {done.stderr.strip()[-600:]}")
    from_env, from_flag = (done.stdout.split() + ["", ""])[:2]
    expect(from_env.lower() == "warning", f"with VAULT_MCP_LOG_LEVEL=warning, args.log_level is {from_env!r}")
    expect(from_flag.lower() == "debug", f"with --log-level debug as well, args.log_level is {from_flag!r}")
    ok("the variable sets the level, and the flag wins over it")
    started = run_copy(server.folder, ["server.py", "--log-level", "warning", "--vault", "/no/such/vault"])
    expect(started.returncode != 0 and "Cannot open the vault" in started.stderr,
           f"a wrong --vault should still stop the server with its one line; stderr: {started.stderr.strip()[-300:]}")
    ok("the server still refuses a wrong vault in one line")
