#!/usr/bin/env bash
# Version negotiation: a client asking for a version the server does not speak gets the
# server's newest instead, and decides whether it can go on. (A new session starts here.)
# Then a client of 2025-03-26, the one revision with JSON-RPC batches: in its session
# an array of messages gets an array of answers, one per request.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' <<'JSON'
{"jsonrpc": "2.0", "id": 22, "method": "initialize", "params": {"protocolVersion": "2099-01-01", "capabilities": {}, "clientInfo": {"name": "curl", "version": "8"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' <<'JSON'
{"jsonrpc": "2.0", "id": 24, "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "curl", "version": "8"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" <<'JSON'
{"jsonrpc": "2.0", "method": "notifications/initialized"}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" <<'JSON'
[{"jsonrpc": "2.0", "id": 25, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}, {"jsonrpc": "2.0", "id": 26, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"folder": "Inbox"}}}]
JSON
