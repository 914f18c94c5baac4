#!/usr/bin/env python3
"""Step 10, the finished server: an Obsidian vault over MCP, by stdio or HTTP.

protocol.py is the core and knows no transport; http_transport.py and
stdio_transport.py carry it; tools.py and resources.py offer the vault's notes
through vault.py, the one place a path becomes a file; vault_index.py keeps the
search index (index.py stores it, search.py ranks it, keyword_index.py scores
words) fed with notes cut by notes.py and embedded by embeddings.py; links.py
resolves links as Obsidian does; inbox.py creates a note, note_writes.py changes one.
At startup reconcile.py brings the stored index up to date with what changed
while the server was off; then watcher.py feeds it each changed note, and
subscriptions.py tells the clients that asked.
"""
# region python-version
# First, before any import: a client may start this file with whatever `python3` it
# finds, and an old one would fail further down with a puzzling SyntaxError or ImportError.
import sys

if sys.version_info < (3, 11):
    sys.exit("vault-mcp needs Python 3.11 or newer, and %s is %s; give the client the full path "
             "of a newer python3" % (sys.executable, sys.version.split()[0]))
# endregion python-version

import argparse
import errno
import ipaddress
import logging
import os
import signal
from pathlib import Path

from embeddings import KINDS, make_embedder
from http_transport import McpHttpServer
from journal import Journal
from index import default_index_dir, open_embedder_folder
from limits import Limits
from ollama_client import DEFAULT_MODEL, OllamaEmbedder, OllamaError
from protocol import SERVER_INFO, Server
from scratch_vault import DEFAULT_VAULT, scratch_vault, steps_folder
from static_embedder import TableMissing
from stdio_transport import serve_stdio
from subscriptions import Hub
from vault import Vault, VaultError
from vault_index import VaultIndex
from write_policy import WritePolicy
from watcher import Watcher

log = logging.getLogger("server")


def main():
    args = parse_args()
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")  # stderr
    try:
        vault = Vault(args.vault or practice_vault(), deny=args.exclude)
    except OSError as error:
        sys.exit(f"Cannot open the vault {args.vault or DEFAULT_VAULT}: {error.strerror or error}. Give a folder with --vault or VAULT_MCP_VAULT.")
    except VaultError as error:
        sys.exit(f"--exclude: {error}")
    log.info("vault: %s", vault.root)
    if args.exclude:
        log.info("deny list: %s, never read nor shown", ", ".join(args.exclude))
    if len(vault.excluded):
        log.info("excluded files: %d filters of .obsidian/app.json, read at startup", len(vault.excluded))
    try:
        embedder, line = make_embedder(args.embedder, model=args.model)
    except (OllamaError, TableMissing) as error:
        sys.exit(f"--embedder {args.embedder}: {error}")
    log.info("%s", line)
    try:
        folder = default_index_dir(vault.root, args.index_dir)
    except ValueError as error:  # an index folder inside the vault would show among its notes
        sys.exit(f"--index-dir: {error}")
    index = VaultIndex(vault, embedder, open_embedder_folder(folder, embedder.name))  # one index per embedder
    if args.embedder == "auto" and not isinstance(embedder, OllamaEmbedder):  # Ollama may come up later
        index.look_for_better(ollama_finder(folder, args.model))
    log.info("index: %s", index.directory)
    hub = Hub()
    watcher, start_watching = watch(vault, index, hub, args)
    index.start(args.reindex, before_reading=start_watching)  # in its own thread: the server answers meanwhile
    # SIGTERM (a service manager, a test) ends the server the way Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    policy = write_policy(args)
    journal = Journal(folder / "journal")  # beside the index, never in the vault
    try:
        if args.stdio:
            say_if_a_person_is_waiting()
            serve_stdio(Server(vault, index, args.inbox, hub, policy, journal))
        else:
            serve_http(args, Server(vault, index, args.inbox, hub, policy, journal))
    except KeyboardInterrupt:
        pass
    finally:
        shut_down(watcher, hub, index)


def practice_vault() -> Path:
    """Without --vault, the step's practice vault; but only a clone of the repository
    has one. The .pyz and the vault-mcp command are the server alone, and their user
    must be told to name a vault, not about a folder of the repository."""
    try:
        steps_folder(Path(__file__))
    except FileNotFoundError:
        sys.exit("No vault given: start the server with --vault FOLDER (or set VAULT_MCP_VAULT), "
                 "FOLDER being your Obsidian vault.")
    return scratch_vault()


def vault_default() -> str:
    """What --help says a missing --vault means: only a clone of the repository has a
    practice vault (practice_vault)."""
    try:
        steps_folder(Path(__file__))
    except FileNotFoundError:
        return "none; give your vault"
    return f"{DEFAULT_VAULT}, a copy of the sample vault, made when missing"


def say_if_a_person_is_waiting() -> None:
    """--stdio is for a client that starts the server and speaks on its stdin; typed in
    a terminal, the server would wait in silence for a message nobody will type."""
    if sys.stdin.isatty():
        print("Waiting for an MCP client on stdin: --stdio is for a client that starts the server "
              "itself. Ctrl-C stops it; without --stdio it serves HTTP.", file=sys.stderr)


# region ollama-finder
def ollama_finder(folder: Path, model: str):
    """find() for VaultIndex.look_for_better: Ollama's embedder and its index's folder
    once Ollama answers and has the model, else None. One quick look, no retries."""
    def find():
        ollama = OllamaEmbedder(None, model)
        try:
            ollama.check()
        except OllamaError:
            return None
        return ollama, open_embedder_folder(folder, ollama.name)
    return find
# endregion ollama-finder


def watch(vault: Vault, index: VaultIndex, hub: Hub, args):
    """A watcher that feeds each changed note to the index and tells the hub, and the
    function that starts it, which the index calls just before it lists or reads a note
    (VaultIndex.start's before_reading). The watcher's first snapshot comes first, so a note
    written meanwhile (by create_note, say) is a change the watcher sees, never one that
    falls between the two; and a restart loads the stored index, which reads no note,
    without waiting for a snapshot of every file in the vault. Its jobs wait for the index
    to be ready, then refresh_note embeds a note only if its chunks changed
    (VaultIndex.update_note)."""
    watcher = Watcher(vault, on_index=index.update_note, on_remove=index.remove_note,
                      on_note_changed=hub.note_changed, on_list_changed=hub.list_changed,
                      poll_interval=args.watch_interval, debounce=args.debounce)

    def start_watching() -> None:
        watcher.start()
        log.info("watching the vault every %g s (debounce %g s)", args.watch_interval, args.debounce)
    return watcher, start_watching


def shut_down(watcher: Watcher, hub: Hub, index: VaultIndex) -> None:
    """Let a build under way stop at its next note and the watcher's job in hand finish,
    so no note's index file is left half written, and end every open stream, so clients
    see an end rather than a cut. Then store the keyword postings if the watcher changed
    them since they were: the next start loads them."""
    index.stop()
    watcher.stop()
    hub.close()
    index.save_keywords()
    log.info("stopped")


def write_policy(args) -> WritePolicy:
    try:
        policy = WritePolicy.make(args.read_only, args.write_folder)
    except VaultError as error:
        sys.exit(f"--write-folder: {error}")
    if policy.read_only:
        log.info("read-only: no tool that writes is offered")
    elif policy.folders:
        log.info("writes only in: %s", ", ".join(policy.folders))
    return policy


def serve_http(args, core: Server):
    limits = Limits(
        max_connections=args.max_connections,
        request_seconds=args.request_timeout,
        max_streams=args.max_streams,
        max_sessions=args.max_sessions,
        session_idle_seconds=args.session_timeout,
    )
    try:
        http_server = McpHttpServer(args.host, args.port, core, limits, token=args.token)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        sys.exit(f"Port {args.port} is in use: stop the server running there (Ctrl-C in its terminal) "
                 f"or choose another port with --port.")
    log.info("listening on http://%s:%d/mcp", args.host, http_server.server_port)
    if args.token:
        log.info("every request must send the token (Authorization: Bearer ...)")  # never the token itself
    try:
        http_server.serve_forever()
    finally:
        # Streams run in daemon threads, which die with the process: each is told to
        # end, and given a moment to send its last chunk, so its client sees an end, not a cut.
        core.hub.close()
        http_server.streams.wait_until_ended(seconds=5.0)
        http_server.server_close()  # the port is free again at once


# region open-door
def check_open_door(host: str, token: str | None) -> None:
    """Beyond loopback, every device on the network can reach the server: without a
    token, anyone there could read the notes (and write them). So it refuses to start."""
    if token is not None and not (token.isascii() and token.isprintable() and " " not in token):
        sys.exit("--token: use letters, digits and punctuation only, such as the output of "
                 "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'")
    if token is None and not is_loopback(host):
        sys.exit(f"--host {host} lets other devices reach the server, and so your notes: give a secret "
                 f"with --token (or VAULT_MCP_TOKEN) that every client must send, or keep the default "
                 f"--host 127.0.0.1")


def is_loopback(host: str) -> bool:
    """127.0.0.1, ::1 and localhost are this machine alone; 0.0.0.0, a LAN address or a name are not."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
# endregion open-door


EPILOG = """\
every option but --stdio and --reindex may also come from the environment variable
in brackets; a flag given on the command line wins over its variable.

Obsidian's excluded files (Settings > Files and links, kept in .obsidian/app.json
as userIgnoreFilters) are read at startup: those notes are left out of listings,
search and related notes, and can still be opened. --exclude goes further: a denied
folder is invisible to every tool, resource, index and the watcher.

examples:
  %(prog)s --vault ~/Notes                 HTTP on http://127.0.0.1:3000/mcp
  %(prog)s --vault ~/Notes --stdio         for a client that starts the server itself
  VAULT_MCP_EMBEDDER=hash %(prog)s         a copy of the sample vault, without Ollama

The index lives in your cache folder, never in the vault (--index-dir to choose).
Logs go to stderr; over --stdio, stdout carries the protocol and nothing else."""


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"{SERVER_INFO['name']} {SERVER_INFO['version']}")
    option = OptionMaker(parser)
    option(parser, "--log-level", str, "info", "how much the log on stderr says; warning leaves out "
           "the line per request", choices=["debug", "info", "warning"])
    notes = parser.add_argument_group("the vault")
    option(notes, "--vault", Path, None, "the Obsidian vault, a folder of notes",
           show_default=vault_default(), metavar="FOLDER")
    option(notes, "--inbox", str, "Inbox", "the folder of the vault where create_note writes", metavar="FOLDER")
    notes.add_argument("--exclude", action="append", metavar="FOLDER",
                       help=f"a folder (or a note) of the vault the server never reads nor shows; repeat it for more "
                            f"[{env_variable('--exclude')}, folders separated by {os.pathsep!r}]")
    writes = parser.add_argument_group("writes")
    writes.add_argument("--read-only", action="store_true", default=env_flag("--read-only"),
                        help=f"offer no tool that writes, create_note included [{env_variable('--read-only')}=1]")
    writes.add_argument("--write-folder", action="append", metavar="FOLDER",
                        help=f"write only inside this folder of the vault; repeat it for more (default: anywhere) "
                             f"[{env_variable('--write-folder')}, folders separated by {os.pathsep!r}]")
    connect = parser.add_argument_group("how clients connect")
    connect.add_argument("--stdio", action="store_true", help="speak over stdin and stdout instead of HTTP")
    option(connect, "--host", str, "127.0.0.1", "address to bind for HTTP")
    option(connect, "--port", int, 3000, "port for HTTP, 0 for any free one")
    # Not through OptionMaker, whose help would print the variable's value: a secret.
    connect.add_argument("--token", default=os.environ.get(env_variable("--token")) or None, metavar="SECRET",
                         help=f"a secret every HTTP request must send as Authorization: Bearer SECRET; needed "
                              f"for any --host but loopback [{env_variable('--token')}] (default: none)")
    search = parser.add_argument_group("search")
    option(search, "--embedder", str, "auto", "auto: Ollama if it answers, else the offline static table", choices=KINDS)
    option(search, "--model", str, DEFAULT_MODEL, "the Ollama model")
    option(search, "--index-dir", Path, None, "where the index is kept",
           show_default="a folder of your cache", metavar="FOLDER")
    search.add_argument("--reindex", action="store_true", help="build the index anew at startup")
    watching = parser.add_argument_group("watching the vault")
    option(watching, "--watch-interval", float, 1.0, "how often the vault is scanned for changes", metavar="SECONDS")
    option(watching, "--debounce", float, 2.0, "a note is indexed once it has been quiet this long", metavar="SECONDS")
    limits = parser.add_argument_group("limits (HTTP)")
    default = Limits()
    option(limits, "--max-connections", int, default.max_connections,
           "connections served at once; more get 503", metavar="N")
    option(limits, "--request-timeout", float, default.request_seconds,
           "to send a whole request, or to stay idle between two", metavar="SECONDS")
    option(limits, "--max-streams", int, default.max_streams,
           "GET and listen streams open at once; more get 503", metavar="N")
    option(limits, "--max-sessions", int, default.max_sessions,
           "sessions kept; the least recently used makes way", metavar="N")
    option(limits, "--session-timeout", float, default.session_idle_seconds,
           "an idle session expires after this", metavar="SECONDS")
    args = parser.parse_args(argv)
    if args.exclude is None:  # as for every option, the command line wins over the variable
        args.exclude = folders_from_env("--exclude")
    if args.write_folder is None:
        args.write_folder = folders_from_env("--write-folder")
    args.token = args.token or None  # an empty secret is no secret: --token "" asks for none
    if not args.stdio:
        check_open_door(args.host, args.token)
    return args


def folders_from_env(flag: str) -> list[str]:
    """VAULT_MCP_EXCLUDE, VAULT_MCP_WRITE_FOLDER: folders separated as in PATH (':', or ';' on Windows)."""
    value = os.environ.get(env_variable(flag), "")
    return [folder for folder in value.split(os.pathsep) if folder.strip()]


def env_flag(flag: str) -> bool:
    """VAULT_MCP_READ_ONLY=1 (or true, yes) turns --read-only on."""
    return os.environ.get(env_variable(flag), "").strip().lower() in ("1", "true", "yes")


# region option-maker
class OptionMaker:
    """Adds an option whose default comes from its environment variable when that is
    set: --watch-interval reads VAULT_MCP_WATCH_INTERVAL. The help names the variable."""

    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser

    def __call__(self, group, flag: str, kind, default, help: str, show_default=None, choices=None, **more):
        variable = env_variable(flag)
        value = os.environ.get(variable, "")
        if value:  # an empty variable counts as unset, as in most shells' habits
            default = self.convert(variable, value, kind, choices)
        shown = show_default if show_default is not None and not value else "%(default)s"
        group.add_argument(flag, type=kind, default=default, choices=choices,
                           help=f"{help} [{variable}] (default: {shown})", **more)

    def convert(self, variable: str, value: str, kind, choices):
        """The variable's value as the option takes it; a wrong one stops the server with one line."""
        try:
            converted = kind(value)
        except ValueError:
            sys.exit(f"{self.parser.prog}: {variable}={value!r} is not {KIND_NAMES.get(kind, 'valid')}")
        if choices and converted not in choices:
            sys.exit(f"{self.parser.prog}: {variable}={value!r} is not one of {', '.join(choices)}")
        return converted


KIND_NAMES = {int: "a whole number", float: "a number"}
ENV_PREFIX = "VAULT_MCP_"


def env_variable(flag: str) -> str:
    """--index-dir -> VAULT_MCP_INDEX_DIR"""
    return ENV_PREFIX + flag.lstrip("-").replace("-", "_").upper()
# endregion option-maker

if __name__ == "__main__":
    main()
