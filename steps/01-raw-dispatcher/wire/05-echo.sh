#!/usr/bin/env bash
# A tool with an argument: echo returns the text it was given.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' <<'JSON'
{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hello, vault"}}}
JSON
