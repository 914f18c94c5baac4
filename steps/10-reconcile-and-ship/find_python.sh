#!/bin/sh
# Starts server.py with a Python 3.11 or newer, wherever one is installed: the bundle
# runs this file on macOS and Linux, not python3 itself. A client started from the
# Finder sees a short PATH, whose python3 may be too old (on macOS, /usr/bin/python3
# is Xcode's 3.9), while the Python the user installed waits where its installer put
# it. POSIX sh and its builtins only: the PATH it is given may hold nothing else.

case $0 in
    */*) here=${0%/*} ;;  # the folder this file is in, beside server.py
    *) here=. ;;
esac

# region places
# PATH first, then where installers put Python: Homebrew (Apple silicon, then Intel
# Macs and Linux), uv's and pipx's bin folder, python.org's framework, pyenv, uv's own
# Pythons. VAULT_MCP_SEARCH_ROOT stands in for / in the tests, and is unset otherwise.
root=${VAULT_MCP_SEARCH_ROOT:-}
places="$PATH:$root/opt/homebrew/bin:$root/usr/local/bin:$HOME/.local/bin"
for folder in "$root"/Library/Frameworks/Python.framework/Versions/3.*/bin \
              "$HOME"/.pyenv/versions/3.*/bin \
              "${XDG_DATA_HOME:-$HOME/.local/share}"/uv/python/cpython-3.*/bin; do
    [ -d "$folder" ] && places="$places:$folder"  # a pattern that matched nothing stays as written
done
# endregion places

# region choose
tried=""

new_enough() {  # $1: a python. True if it runs and says it is 3.11 or newer.
    version=$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || return 1
    tried="$tried
    $1 is $version"
    major=${version%%.*} minor=${version#*.}
    case "$major.$minor" in
        *[!0-9.]* | .* | *.) return 1 ;;  # not two numbers: not a Python we understand
    esac
    [ "$major" -gt 3 ] || { [ "$major" -eq 3 ] && [ "$minor" -ge 11 ]; }
}

# A python3.N by name first, in every place, then a plain python3: so a newer Python
# installed anywhere wins over an old python3 that comes first in PATH, and Xcode's
# /usr/bin/python3 (which offers to install developer tools) is asked only if need be.
set -f  # the places are split at ':', and never expanded as patterns
IFS=:
for name in python3.14 python3.13 python3.12 python3.11 python3; do
    for folder in $places; do
        if [ -x "$folder/$name" ] && new_enough "$folder/$name"; then
            unset IFS
            exec "$folder/$name" "$here/server.py" "$@"
        fi
    done
done
unset IFS
# endregion choose

printf '%s\n' "vault-mcp needs Python 3.11 or newer, and found none.${tried:+ These are older:}$tried" \
    "Looked in: $places" \
    "Install Python 3.13 from https://www.python.org/downloads/ (on a Mac, or: brew install python@3.13;" \
    "on Linux, your package manager's python3.13), then restart the client." >&2
exit 1
