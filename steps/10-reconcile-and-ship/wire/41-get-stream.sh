#!/usr/bin/env bash
# The payoff: a client subscribes to a note, opens the GET stream, and the note changes
# on disk, as it does when Obsidian saves it. The watcher sees the new size and time,
# waits for the note to be quiet, re-indexes it, and tells every session subscribed to
# it: one notifications/resources/updated, as a server-sent event on the stream.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 74, "method": "resources/subscribe", "params": {"uri": "vault:///Bread/Focaccia.md"}}
JSON

listen_while_editing 6 'Bread/Focaccia.md' 'Accept: text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25'
