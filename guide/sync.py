#!/usr/bin/env python3
"""Keep the code and transcripts quoted in the chapters equal to the steps.

A chapter quotes a file, a named region of a file, or a wire transcript:

    <!-- include: 01-raw-dispatcher/server.py#dispatch -->
    (a fenced block, written by this tool)
    <!-- /include -->

Paths are relative to steps/. A region is marked in the code with a pair of
comments, `# region NAME` and `# endregion NAME`, which editors can fold.
A `.out` transcript is shown with the command that produces it: the wire
script of the same name, or else the Python program of the same name.

A wire transcript can be shown brief, with only the lines that matter:

    <!-- include: 02-protocol-and-sessions/wire/06-echo.out brief -->
    <!-- include: 02-protocol-and-sessions/wire/17-origin-and-host.out brief keep=Content-Type drop=Host -->
    <!-- include: 02-protocol-and-sessions/wire/12-invalid-messages.out brief flat -->
    <!-- include: 07-vector-index/wire/36-reindex.out brief flat events=2 -->

Brief keeps the request and status lines and the headers in BRIEF_KEEP (keep= and
drop= change that set for one include), drops every other header, indents a JSON
body that travels on one line longer than BRIEF_WIDTH characters (a short one stays
on its line, where it reads best; flat leaves every body on its line, for a run of
exchanges where no body is the point, unless it is longer than MAX_LINE), cuts
strings longer than LONG_STRING, saying so, and ends with the command that prints
the whole transcript. A program's transcript (client.out) may be brief too: its
">>> " and "<<< " lines are messages, like an event's "data: " line. events=N shows the first N events of a long run of server-sent
events and the last one, and says in one line how many it left out between them.
The .out file keeps the wire form; the brief block is derived from it, so
`make guide-check` holds it to the transcript like any other block.

    python3 guide/sync.py          rewrite every block from the code (make guide)
    python3 guide/sync.py --check  fail on a stale block, a missing file or region,
                                   a broken region, or a region or transcript no
                                   chapter shows
"""
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(
    r"^<!-- include: (?P<target>\S+)(?P<options>(?: \S+)*) -->\n(?P<body>.*?)^<!-- /include -->$", re.M | re.S
)
OPENING = re.compile(r"^<!-- include: \S+(?: \S+)* -->$", re.M)
# The headers a brief transcript keeps: what sessions, versions, routing and the door
# checks are about. The rest (Content-Type, Content-Length, Accept, Connection...)
# is the same in every exchange.
BRIEF_KEEP = ("Mcp-Session-Id", "MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "Origin", "Host", "Allow")
# A brief block indents a one-line JSON body only when the line is longer than this:
# a short body reads best as it travelled, and indented it takes five lines or more.
BRIEF_WIDTH = 100
# No line of a brief block is longer than this: a flat body that would be is indented too.
MAX_LINE = 300
# A string in a brief block's JSON longer than this is cut, saying how long it was. A
# tool result's text copy of its structuredContent is cut whatever its length: the
# same data follows, indented.
LONG_STRING = 160
MESSAGE_PREFIXES = ("data: ", ">>> ", "<<< ")  # an event's data; a line client.py sent or read
REGION = re.compile(r"^\s*# (region|endregion) (\S+)\s*$")
LANGUAGES = {".py": "python", ".sh": "bash", ".toml": "toml", ".json": "json", ".md": "markdown"}
CODE_SUFFIXES = {".py", ".sh"}


class SyncError(Exception):
    pass


def regions(path: Path) -> dict[str, list[str]]:
    """The named regions of a file, each as its lines without the marker lines."""
    found, open_regions = {}, {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = REGION.match(line)
        if not match:
            for lines in open_regions.values():
                lines.append(line)
            continue
        kind, name = match.groups()
        if kind == "region":
            if name in found or name in open_regions:
                raise SyncError(f"{path}:{number}: region {name!r} is defined twice")
            open_regions[name] = []
        elif name not in open_regions:
            raise SyncError(f"{path}:{number}: endregion {name!r} without its region")
        else:
            found[name] = open_regions.pop(name)
    if open_regions:
        raise SyncError(f"{path}: region {', '.join(open_regions)} is never closed")
    return found


def render(target: str, steps_dir: Path, options: str = "") -> str:
    """The fenced block a chapter shows for `path` or `path#region`, with options."""
    relative, _, name = target.partition("#")
    path = steps_dir / relative
    if not path.is_file():
        raise SyncError(f"no file steps/{relative}")
    keep, flat, events = brief_options(options.split())
    if keep is not None and path.suffix != ".out":
        raise SyncError(f"steps/{relative}: brief applies to transcripts (.out) only")
    if path.suffix == ".out":
        command = f"steps/{relative.removesuffix('.out')}.sh"
        if not path.with_suffix(".sh").exists():  # a transcript a Python program prints
            command = f"python3 steps/{relative.removesuffix('.out')}.py"
        if keep is None:
            return fence("console", f"$ {command}\n" + path.read_text().rstrip("\n"))
        transcript = path.read_text()
        text = brief(transcript, keep, flat)
        how = "repeated headers left out"
        if brief(transcript, keep, flat, shorten=False) != brief(transcript, keep, flat=True, shorten=False):
            how += ", long JSON indented"
        if text != brief(transcript, keep, flat, shorten=False):
            how += ", long strings cut"
        if events is not None:
            text, left_out = fewer_events(text, events)
            how += f", {left_out} events left out" if left_out else ""
        shown = fence("console", f"$ {command}\n" + text.rstrip("\n"))
        return shown + f"Shortened: {how}. In full: `cat steps/{relative}`\n"
    if name:
        found = regions(path)
        if name not in found:
            raise SyncError(f"steps/{relative} has no region {name!r}")
        text = "\n".join(found[name])
    else:
        text = path.read_text().rstrip("\n")
    return fence(LANGUAGES.get(path.suffix, "text"), text)


def brief_options(options: list[str]) -> tuple[set[str] | None, bool, int | None]:
    """The headers a brief block keeps, lower-cased (None when the block is not brief),
    whether it is flat (every JSON body left on its line), and how many events of a
    long run it shows before the last (None: all)."""
    if not options:
        return None, False, None
    if options[0] != "brief":
        raise SyncError(f"unknown include option {options[0]!r}: the options are brief, keep=, drop=, flat, events=")
    keep, flat, events = {name.lower() for name in BRIEF_KEEP}, False, None
    for option in options[1:]:
        key, _, value = option.partition("=")
        if option == "flat":
            flat = True
        elif key == "events" and value.isdigit() and int(value) > 0:
            events = int(value)
        elif key in ("keep", "drop") and value:
            change = {name.lower() for name in value.split(",")}
            keep = keep | change if key == "keep" else keep - change
        else:
            raise SyncError(f"unknown include option {option!r}: after brief come keep=A,B, drop=A,B, flat "
                            "and events=N (N at least 1)")
    return keep, flat, events


def brief(transcript: str, keep: set[str], flat: bool = False, shorten: bool = True) -> str:
    """A transcript with only the headers in keep, long strings cut (shorten), and long
    one-line JSON bodies indented: unless flat, those over BRIEF_WIDTH; all over MAX_LINE."""
    lines, in_headers = [], False
    for line in transcript.splitlines():
        if line in (">", "<"):  # the end of a header block
            in_headers = False
        elif line.startswith(("> ", "< ")) and not in_headers:  # a request or status line
            in_headers = True
        elif in_headers:
            if line[2:].partition(":")[0].strip().lower() not in keep:
                continue
        else:
            line = readable(line, flat, shorten)
        lines.append(line)
    return "\n".join(lines) + "\n"


def readable(line: str, flat: bool, shorten: bool) -> str:
    """A body line as a brief block shows it: a message in JSON exactly as json.dumps wrote
    it (alone, or after one of MESSAGE_PREFIXES) with long strings cut, and indented
    when long; any other line as it is, so a brief block never shows what was not sent."""
    prefix = next((prefix for prefix in MESSAGE_PREFIXES if line.startswith(prefix)), "")
    try:
        value = json.loads(line[len(prefix):])
    except ValueError:
        return line
    if not isinstance(value, (dict, list)) or json.dumps(value) != line[len(prefix):]:
        return line
    if shorten:
        value = cut(value)
    one_line = prefix + json.dumps(value)
    if len(one_line) <= MAX_LINE and (flat or len(one_line) <= BRIEF_WIDTH):
        return one_line
    return prefix + json.dumps(value, indent=2)


def cut(value):
    """value with every string over LONG_STRING cut, and a tool result's text copy of its
    structuredContent (json.dumps(data, indent=2), as tools.py writes it) cut to its start."""
    if isinstance(value, list):
        return [cut(item) for item in value]
    if not isinstance(value, dict):
        return cut_string(value, LONG_STRING) if isinstance(value, str) else value
    if "structuredContent" in value and isinstance(value.get("content"), list):
        copy = json.dumps(value["structuredContent"], ensure_ascii=False, indent=2)
        value = {**value, "content": [
            {**item, "text": cut_string(item["text"], 0, "the structuredContent below, as JSON text")}
            if isinstance(item, dict) and item.get("text") == copy else item for item in value["content"]]}
    return {key: cut(item) for key, item in value.items()}


def cut_string(text: str, keep: int, what: str = "") -> str:
    """text, or its first `keep` characters and what was cut (ASCII: JSON shows it as it is)."""
    if what:
        return f"[{what}: {len(text)} characters]"
    return text if len(text) <= LONG_STRING else f"{text[:keep]}... [{len(text)} characters, cut]"


def fewer_events(text: str, shown: int) -> tuple[str, int]:
    """The text with each run of server-sent events (blocks of "event:" and "data:"
    lines, each ended by a blank line) that has two or more to spare cut to its first
    `shown` events and its last, with a line saying how many were left out between;
    and how many were, in all."""
    lines, out, left_out, index = text.split("\n"), [], 0, 0
    while index < len(lines):
        run = []
        while index < len(lines) and lines[index].startswith(("event: ", "data: ")):
            end = index
            while end < len(lines) and lines[end].startswith(("event: ", "data: ")):
                end += 1
            if end < len(lines) and lines[end] == "":
                end += 1  # the blank line that ends the event belongs to it
            run.append(lines[index:end])
            index = end
            if run[-1][-1] != "":  # an event not ended by a blank line ends the run
                break
        if len(run) > shown + 2:  # leaving out one event would save no line
            hidden = len(run) - shown - 1
            run = run[:shown] + [[f"[{hidden} more events like these]", ""]] + run[-1:]
            left_out += hidden
        out += [line for event in run for line in event]
        if index < len(lines) and not run:
            out.append(lines[index])
            index += 1
    return "\n".join(out), left_out


def fence(language: str, text: str) -> str:
    ticks = "````" if "```" in text else "```"
    return f"{ticks}{language}\n{text}\n{ticks}\n"


def sync_chapter(chapter: Path, steps_dir: Path) -> tuple[str, list[str]]:
    """The chapter with every block rewritten, and the targets it quotes."""
    text = chapter.read_text()
    if len(OPENING.findall(text)) != len(INCLUDE.findall(text)):
        raise SyncError(f"{chapter.name}: an include is not closed by <!-- /include -->")
    targets = []

    def replace(match: re.Match) -> str:
        targets.append(match["target"])
        try:
            body = render(match["target"], steps_dir, match["options"])
        except SyncError as error:
            raise SyncError(f"{chapter.name}: {error}") from None
        return f"<!-- include: {match['target']}{match['options']} -->\n{body}<!-- /include -->"

    return INCLUDE.sub(replace, text), targets


def shared_folder(steps_dir: Path) -> list[str]:
    """The folder of files the steps share, as steps.toml's [data] names it (none in a test's tree)."""
    manifest = steps_dir / "steps.toml"
    if not manifest.is_file():
        return []
    with open(manifest, "rb") as f:
        return [tomllib.load(f)["data"]["folder"]]


def unquoted(steps_dir: Path, quoted: set[str]) -> list[str]:
    """Regions and transcripts no chapter shows, in the steps and in their shared
    data folder (its script). One counts as shown when any step's copy of the same
    file (same path inside the step folder) is quoted."""
    shown = {(t.partition("/")[2].partition("#")[0], t.partition("#")[2]) for t in quoted}
    missing = []
    folders = ["[0-9][0-9]-*", *shared_folder(steps_dir)]
    for path in sorted(path for folder in folders for path in steps_dir.glob(f"{folder}/**/*")):
        if "__pycache__" in path.parts:
            continue
        where = path.relative_to(steps_dir).as_posix()
        inside_step = where.partition("/")[2]
        if path.suffix == ".out" and (inside_step, "") not in shown:
            missing.append(f"steps/{where}: no chapter shows this transcript")
        if path.suffix in CODE_SUFFIXES:
            for name in regions(path):
                if (inside_step, name) not in shown:
                    missing.append(f"steps/{where}#{name}: no chapter quotes this region")
    return missing


def sync(guide_dir: Path, steps_dir: Path, check: bool) -> list[str]:
    """Rewrite (or, with check, compare) every chapter; return the problems found."""
    problems, quoted = [], set()
    for chapter in sorted(guide_dir.glob("[0-9][0-9]-*.md")):  # chapters; README and CONVENTIONS only show examples
        try:
            new_text, targets = sync_chapter(chapter, steps_dir)
        except SyncError as error:
            problems.append(str(error))
            continue
        quoted.update(targets)
        if new_text != chapter.read_text():
            if check:
                problems.append(f"{chapter.name}: quoted code or transcript differs from the steps")
            else:
                chapter.write_text(new_text)
                print(f"rewrote {chapter.relative_to(guide_dir.parent)}")
    try:
        problems += unquoted(steps_dir, quoted)
    except SyncError as error:
        problems.append(str(error))
    return problems


def main() -> int:
    check = "--check" in sys.argv[1:]
    problems = sync(ROOT / "guide", ROOT / "steps", check)
    for problem in problems:
        print(f"guide: {problem}", file=sys.stderr)
    if problems and check:
        print("guide: run `make guide` to rewrite the quoted blocks, then read the diff.", file=sys.stderr)
    elif check:
        print(f"guide: {len(list((ROOT / 'guide').glob('[0-9][0-9]-*.md')))} chapters match the steps")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
