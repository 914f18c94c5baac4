#!/usr/bin/env bash
# A body that is not JSON at all. The server cannot even read an id, so it answers
# HTTP 400 with a parse error (-32700) whose id is null.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' <<'JSON'
{"jsonrpc": "2.0", "id": 7, "method": "tools/list"
JSON
