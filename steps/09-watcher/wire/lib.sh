# Sourced by the numbered scripts in this folder; not run on its own.
# Each exchange prints what is sent (lines after ">") and what comes back
# (lines after "<"), with the JSON bodies as they travel on the wire.
MCP_URL=${MCP_URL:-http://127.0.0.1:3000/mcp}
set -o pipefail  # a failed curl fails the script, even though awk ends the pipe
# The session id from the last initialize is kept here, so the next script can
# send it as "Mcp-Session-Id: $SESSION".
MCP_WIRE_STATE=${MCP_WIRE_STATE:-${TMPDIR:-/tmp}/mcp-wire-$(id -u)}
mkdir -p "$MCP_WIRE_STATE"
SESSION=$(cat "$MCP_WIRE_STATE/session-id" 2>/dev/null)

# post HEADER... <<'JSON'   sends the JSON read from stdin with POST
post() {
  cat > "$MCP_WIRE_STATE/body"
  exchange POST "$(cat "$MCP_WIRE_STATE/body")" "$@"
}

# post_large BYTES HEADER...   POSTs a ping padded with spaces to BYTES bytes
post_large() {
  local size=$1 ping='{"jsonrpc": "2.0", "id": 99, "method": "ping"}'
  shift
  { printf '%s' "$ping"; head -c $((size - ${#ping})) /dev/zero | tr '\0' ' '; } > "$MCP_WIRE_STATE/body"
  exchange POST "$ping ... (padded with spaces to $size bytes)" "$@"
}

# send METHOD HEADER...     sends a request without a body (GET, DELETE)
send() {
  local method=$1
  shift
  exchange "$method" "" "$@"
}

exchange() {
  local method=$1 shown=$2 header
  shift 2
  local curl_args=(-sS -i -X "$method" "$MCP_URL")
  printf '> %s /%s\n' "$method" "${MCP_URL#*://*/}"
  for header in "$@"; do
    [[ ${header#*:} =~ [^[:space:]] ]] || continue  # a header with no value (no session yet) is not sent
    printf '> %s\n' "$header"
    curl_args+=(-H "$header")
  done
  printf '>\n'
  if [ -n "$shown" ]; then
    printf '%s\n' "$shown"
    curl_args+=(--data-binary "@$MCP_WIRE_STATE/body")
  fi
  curl "${curl_args[@]}" | tr -d '\r' | tee "$MCP_WIRE_STATE/response" | show_response || no_answer
  remember_session
  echo
}

# Headers get a "< " prefix; Date and Server change every run, so they are left out.
show_response() {
  awk '
    in_body { print; next }
    /^$/ { print "<"; in_body = 1; next }
    !/^(Date|Server):/ { print "< " $0 }'
}

# The vault the server reads: the step's practice vault (steps/scratch/vaults/NN-name,
# what make step-N serves) unless MCP_VAULT names another.
STEP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case $STEP_DIR in
  */scratch/*) MCP_VAULT=${MCP_VAULT:-${STEP_DIR%/*}/vaults/${STEP_DIR##*/}} ;;
  *) MCP_VAULT=${MCP_VAULT:-${STEP_DIR%/*}/scratch/vaults/${STEP_DIR##*/}} ;;
esac

# listen_while_editing SECONDS NOTE HEADER...   opens the GET stream; a second later
# appends a line to NOTE in the vault, as an editor saving it would; prints what the
# stream carried in SECONDS. The stream stays open, so curl stops reading at the end.
# It opens a second after it is called: a note created a moment before (39-create-note)
# is still on its way through the watcher, and would be told of too.
listen_while_editing() {
  local seconds=$1 note=$2 header status
  shift 2
  sleep 1
  local curl_args=(-sS -i -N --max-time "$seconds" -X GET "$MCP_URL")
  printf '> GET /%s\n' "${MCP_URL#*://*/}"
  for header in "$@"; do
    printf '> %s\n' "$header"
    curl_args+=(-H "$header")
  done
  printf '>\n(a second later, a line is added to %s; the stream is read for %s s)\n' "$note" "$seconds"
  { sleep 1; printf '\nA line added while the stream listens.\n' >> "$MCP_VAULT/$note"; } &
  curl "${curl_args[@]}" > "$MCP_WIRE_STATE/response" 2> /dev/null
  status=$?
  wait
  [ "$status" -eq 0 ] || [ "$status" -eq 28 ] || no_answer  # 28: the time was up
  tr -d '\r' < "$MCP_WIRE_STATE/response" | show_response
  echo
}

no_answer() {
  echo "No answer from $MCP_URL. Is the step's server running (make step-N)? Or set MCP_URL." >&2
  exit 1
}

# remember_version   keeps the "version" of the last answer (get_note's, an edit's) as
# $VERSION, here and in the next scripts: an edit passes back the version it read.
VERSION=$(cat "$MCP_WIRE_STATE/version" 2>/dev/null)
remember_version() {
  VERSION=$(grep -o '"version": "[0-9a-f]*"' "$MCP_WIRE_STATE/response" | head -1 | cut -d'"' -f4)
  printf '%s' "$VERSION" > "$MCP_WIRE_STATE/version"
}

# remember_edit   keeps the "editId" of the last answer as $EDIT_ID, for undo_edit.
EDIT_ID=$(cat "$MCP_WIRE_STATE/edit-id" 2>/dev/null)
remember_edit() {
  EDIT_ID=$(grep -o '"editId": "[0-9]*"' "$MCP_WIRE_STATE/response" | head -1 | cut -d'"' -f4)
  printf '%s' "$EDIT_ID" > "$MCP_WIRE_STATE/edit-id"
}

remember_session() {
  local id
  id=$(awk '/^$/ { exit } tolower($1) == "mcp-session-id:" { print $2 }' "$MCP_WIRE_STATE/response")
  if [ -n "$id" ]; then
    SESSION=$id
    printf '%s' "$id" > "$MCP_WIRE_STATE/session-id"
  fi
}
