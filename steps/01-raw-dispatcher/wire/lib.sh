# Sourced by the numbered scripts in this folder; not run on its own.
# Each exchange prints what is sent (lines after ">") and what comes back
# (lines after "<"), with the JSON bodies as they travel on the wire.
MCP_URL=${MCP_URL:-http://127.0.0.1:3000/mcp}
set -o pipefail  # a failed curl fails the script, even though awk ends the pipe

# post HEADER... <<'JSON'   sends the JSON read from stdin with POST
post() {
  local body
  body=$(cat)
  exchange POST "$body" "$@"
}

# send METHOD HEADER...     sends a request without a body (GET, DELETE)
send() {
  local method=$1
  shift
  exchange "$method" "" "$@"
}

exchange() {
  local method=$1 body=$2 header
  shift 2
  local curl_args=(-sS -i -X "$method" "$MCP_URL")
  printf '> %s /%s\n' "$method" "${MCP_URL#*://*/}"
  for header in "$@"; do
    printf '> %s\n' "$header"
    curl_args+=(-H "$header")
  done
  printf '>\n'
  if [ -n "$body" ]; then
    printf '%s\n' "$body"
    curl_args+=(--data-binary "$body")
  fi
  # Headers get a "< " prefix; Date and Server change every run, so they are left out.
  curl "${curl_args[@]}" | tr -d '\r' | awk '
    in_body { print; next }
    /^$/ { print "<"; in_body = 1; next }
    !/^(Date|Server):/ { print "< " $0 }' || no_answer
  echo
}

no_answer() {
  echo "No answer from $MCP_URL. Is the step's server running (make step-N)? Or set MCP_URL." >&2
  exit 1
}
