#!/usr/bin/env bash
# Calling a tool: its name and its arguments. The result is a list of content blocks.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' <<'JSON'
{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ping", "arguments": {}}}
JSON
