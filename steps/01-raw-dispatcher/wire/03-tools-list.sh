#!/usr/bin/env bash
# The client asks which tools exist. Each comes with a JSON Schema for its arguments.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' <<'JSON'
{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
JSON
