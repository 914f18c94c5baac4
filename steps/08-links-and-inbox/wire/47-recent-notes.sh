#!/usr/bin/env bash
# Questions about time. "What did I change last in Ferments?": list_notes
# sorted by modification, newest first, each entry with its title and time (a fresh
# practice vault, like check.py's copy, gets fixed times from scratch_vault.pin_times,
# so this transcript is the same on every machine).
# "What changed in Journal since the 6th?": modifiedAfter, in ISO 8601. A date that is no
# date is refused in words.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 80, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"folder": "Ferments", "sort": "modified", "limit": 3}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 81, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"folder": "Journal", "modifiedAfter": "2026-04-06T00:00:00Z", "modifiedBefore": "2026-05-01"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 83, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"modifiedAfter": "last week"}}}
JSON
