#!/usr/bin/env bash
# Step 9 watches the vault, so a session may subscribe to a note: from now on, when the
# note changes, a notifications/resources/updated for its URI goes out on the session's
# GET stream (tests/test_step09_watcher.py shows it arrive). The URI is judged like a
# path, and .md may be left out. Unsubscribing takes it back; a note that does not exist
# cannot be subscribed to.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 71, "method": "resources/subscribe", "params": {"uri": "vault:///Bread/Focaccia"}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 72, "method": "resources/unsubscribe", "params": {"uri": "vault:///Bread/Focaccia.md"}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 73, "method": "resources/subscribe", "params": {"uri": "vault:///Bread/No such bread"}}
JSON
