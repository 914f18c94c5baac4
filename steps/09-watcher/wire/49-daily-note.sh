#!/usr/bin/env bash
# "Add this to today's note." daily_note finds the day's note where Obsidian's Daily notes
# settings (.obsidian/daily-notes.json, or Periodic Notes') put it; the sample vault has
# none, so Obsidian's defaults name it: "YYYY-MM-DD" at the vault's root. A date is given
# here so that the transcript is the same every day. The note is missing, so it is
# read as `exists: false`; with `append`, it is created (from the template, when the
# settings name one) and the text added; a second append only adds. A date that is no
# date is refused.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 87, "method": "tools/call", "params": {"name": "daily_note", "arguments": {"date": "2026-04-05"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 88, "method": "tools/call", "params": {"name": "daily_note", "arguments": {"date": "2026-04-05", "append": "- Fed the starter at 8; it peaked by noon."}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 89, "method": "tools/call", "params": {"name": "daily_note", "arguments": {"date": "2026-04-05", "append": "- Mixed the country loaf at 13:00."}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 90, "method": "tools/call", "params": {"name": "daily_note", "arguments": {"date": "5 April"}}}
JSON
