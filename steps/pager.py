"""Show long output the way git does: on a terminal, in colour and through a pager
(`less -R`, or $PAGER); into a pipe or a file, as plain text."""
import os
import shlex
import shutil
import subprocess
import sys

COLOURS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m", "=": "\033[1m"}


def show(lines: list[str], out=sys.stdout) -> None:
    """Write lines of a diff; on a terminal, in colour and through a pager."""
    if not out.isatty():
        out.writelines(terminated(line) for line in lines)
        return
    text = "".join(paint(terminated(line)) for line in lines)
    pager = shlex.split(os.environ.get("PAGER") or "less -R")
    if not pager or shutil.which(pager[0]) is None:
        out.write(text)
        return
    # F: quit at once when it fits one screen; R: keep the colours; X: leave it on the screen.
    env = {**os.environ, "LESS": os.environ.get("LESS", "FRX")}
    process = subprocess.Popen(pager, stdin=subprocess.PIPE, env=env, text=True)
    try:
        process.stdin.write(text)
        process.stdin.close()
    except BrokenPipeError:  # the reader quit the pager early
        pass
    process.wait()


def terminated(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def paint(line: str) -> str:
    start = COLOURS.get(line[0], "") if not line.startswith(("+++", "---")) else ""
    return f"{start}{line[:-1]}\033[0m\n" if start else line
