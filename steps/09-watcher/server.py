#!/usr/bin/env python3
"""Step 9: the index kept fresh while the server runs, and clients told of changes.

protocol.py is the core and knows no transport; http_transport.py and
stdio_transport.py carry it; tools.py and resources.py offer the vault's notes
through vault.py, the one place a path becomes a file; vault_index.py keeps the
search index (index.py stores it, search.py ranks it, keyword_index.py scores
words) fed with notes cut by notes.py and embedded by embeddings.py; links.py
resolves links as Obsidian does; inbox.py creates a note, note_writes.py changes one.
watcher.py polls the vault and feeds changed notes to the index, one at a time;
subscriptions.py tells the clients that asked (GET stream, stdio, subscriptions/listen).
Run it:  python3 server.py --vault PATH --port 3000   (HTTP)
         python3 server.py --vault PATH --stdio       (for clients that start the server)
The index lives in your cache folder, never in the vault (--index-dir to choose).
"""
import argparse
import errno
import logging
import os
import signal
import sys
from pathlib import Path

from embeddings import KINDS, make_embedder
from http_transport import McpHttpServer
from journal import Journal
from index import default_index_dir
from limits import Limits
from ollama_client import DEFAULT_MODEL, OllamaError
from protocol import Server
from scratch_vault import DEFAULT_VAULT, scratch_vault
from static_embedder import TableMissing
from stdio_transport import serve_stdio
from subscriptions import Hub
from vault import Vault, VaultError
from vault_index import VaultIndex
from write_policy import WritePolicy
from watcher import Watcher

log = logging.getLogger("step9")


def main():
    args = parse_args()
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")  # stderr
    try:
        vault = Vault(args.vault or scratch_vault())
    except OSError as error:
        sys.exit(f"Cannot open the vault {args.vault or DEFAULT_VAULT}: {error.strerror or error}. Give a folder with --vault.")
    log.info("vault: %s", vault.root)
    try:
        embedder, line = make_embedder(args.embedder, model=args.model)
    except (OllamaError, TableMissing) as error:
        sys.exit(f"--embedder {args.embedder}: {error}")
    log.info("%s", line)
    index = VaultIndex(vault, embedder, default_index_dir(vault.root, args.index_dir))
    log.info("index: %s", index.directory)
    hub = Hub()
    watcher = watch(vault, index, hub, args)  # first: its snapshot comes before the index reads a note
    index.start(rebuild=args.reindex)  # in its own thread: the server answers meanwhile
    # SIGTERM (a service manager, a test) ends the server the way Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    policy = write_policy(args)
    journal = Journal(index.directory / "journal")  # beside the index, never in the vault
    try:
        if args.stdio:
            serve_stdio(Server(vault, index, args.inbox, hub, policy, journal))
        else:
            serve_http(args, Server(vault, index, args.inbox, hub, policy, journal))
    except KeyboardInterrupt:
        pass
    finally:
        shut_down(watcher, hub)


# region watch
def watch(vault: Vault, index: VaultIndex, hub: Hub, args) -> Watcher:
    """A watcher that feeds each changed note to the index and tells the hub.

    It starts before the index is loaded or built: its first snapshot is taken
    before the build lists a note, so a note written during the build (by
    create_note, say) is a change the watcher sees, never one that falls between
    the two. Its jobs wait for the index to be ready (VaultIndex.update_note)."""
    watcher = Watcher(vault, on_index=index.update_note, on_remove=index.remove_note,
                      on_note_changed=hub.note_changed, on_list_changed=hub.list_changed,
                      poll_interval=args.watch_interval, debounce=args.debounce)
    watcher.start()
    log.info("watching the vault every %g s (debounce %g s)", args.watch_interval, args.debounce)
    return watcher


def shut_down(watcher: Watcher, hub: Hub) -> None:
    """Let the job in hand finish, so no note's index file is left half written,
    and end every open stream, so clients see an end rather than a cut."""
    watcher.stop()
    hub.close()
    log.info("stopped")
# endregion watch


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
        http_server = McpHttpServer(args.host, args.port, core, limits)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        sys.exit(f"Port {args.port} is in use: stop the server running there (Ctrl-C in its terminal) "
                 f"or choose another port with --port.")
    log.info("listening on http://%s:%d/mcp", args.host, http_server.server_port)
    try:
        http_server.serve_forever()
    finally:
        # Streams run in daemon threads, which die with the process: each is told to
        # end, and given a moment to send its last chunk, so its client sees an end, not a cut.
        core.hub.close()
        http_server.streams.wait_until_ended(seconds=5.0)
        http_server.server_close()  # the port is free again at once


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=3000, help="port, 0 for any free one (default: %(default)s)")
    parser.add_argument("--stdio", action="store_true", help="speak over stdin and stdout instead of HTTP")
    parser.add_argument("--vault", type=Path,
                        help=f"the Obsidian vault, a folder of notes (default: {DEFAULT_VAULT}, "
                             "a copy of the sample vault, made when missing)")
    search = parser.add_argument_group("search")
    search.add_argument("--embedder", choices=KINDS, default=os.environ.get("VAULT_MCP_EMBEDDER", "auto"),
                        help="auto: Ollama if it answers, else the offline static table (default: %(default)s)")
    search.add_argument("--model", default=DEFAULT_MODEL, help="the Ollama model (default: %(default)s)")
    search.add_argument("--index-dir", type=Path, default=os.environ.get("VAULT_MCP_INDEX_DIR"),
                        help="where the index is kept (default: a folder of your cache, by vault)")
    search.add_argument("--reindex", action="store_true", help="build the index anew at startup")
    parser.add_argument("--inbox", default=os.environ.get("VAULT_MCP_INBOX", "Inbox"),
                        help="the folder of the vault where create_note writes (default: %(default)s)")
    writes = parser.add_argument_group("writes")
    writes.add_argument("--read-only", action="store_true", default=os.environ.get("VAULT_MCP_READ_ONLY", "") not in
                        ("", "0", "false", "no"), help="offer no tool that writes, create_note included "
                                                       "[VAULT_MCP_READ_ONLY=1]")
    writes.add_argument("--write-folder", action="append", metavar="FOLDER",
                        help="write only inside this folder of the vault; repeat it for more (default: anywhere)")
    watching = parser.add_argument_group("watching the vault")
    watching.add_argument("--watch-interval", type=float, metavar="SECONDS",
                          default=float(os.environ.get("VAULT_MCP_WATCH_INTERVAL", 1.0)),
                          help="how often the vault is scanned for changes (default: %(default)s)")
    watching.add_argument("--debounce", type=float, metavar="SECONDS",
                          default=float(os.environ.get("VAULT_MCP_DEBOUNCE", 2.0)),
                          help="a note is indexed once it has been quiet this long (default: %(default)s)")
    limits = parser.add_argument_group("limits (HTTP)")
    default = Limits()
    limits.add_argument("--max-connections", type=int, default=default.max_connections, metavar="N",
                        help="connections served at once; more get 503 (default: %(default)s)")
    limits.add_argument("--request-timeout", type=float, default=default.request_seconds, metavar="SECONDS",
                        help="to send a whole request, or to stay idle between two (default: %(default)s)")
    limits.add_argument("--max-streams", type=int, default=default.max_streams, metavar="N",
                        help="GET and listen streams open at once; more get 503 (default: %(default)s)")
    limits.add_argument("--max-sessions", type=int, default=default.max_sessions, metavar="N",
                        help="sessions kept; the least recently used makes way (default: %(default)s)")
    limits.add_argument("--session-timeout", type=float, default=default.session_idle_seconds, metavar="SECONDS",
                        help="an idle session expires after this (default: %(default)s)")
    parser.add_argument("--log-level", choices=["debug", "info", "warning"], default="info",
                        help="how much the log on stderr says; warning leaves out the line per request "
                             "(default: %(default)s)")
    return parser.parse_args()


if __name__ == "__main__":
    main()
