"""The guide quotes the steps faithfully, and guide/sync.py catches every kind of drift."""
import json
import re
import subprocess
import sys

import pytest

from manifest import ROOT

sys.path.insert(0, str(ROOT / "guide"))
from sync import BRIEF_WIDTH, LONG_STRING, MAX_LINE, readable, sync  # noqa: E402

BLOCK = "<!-- include: {target} -->\n```\nstale\n```\n<!-- /include -->\n"


@pytest.mark.drift
def test_the_guide_is_in_sync_with_the_steps():
    done = subprocess.run([sys.executable, str(ROOT / "guide" / "sync.py"), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr



@pytest.mark.drift
def test_no_line_of_a_console_block_is_longer_than_a_reader_can_follow():
    too_long = [f"{chapter.name}: {len(line)} characters: {line[:60]}..."
                for chapter in sorted((ROOT / "guide").glob("[0-9][0-9]-*.md"))
                for block in re.findall(r"^```console\n(.*?)^```", chapter.read_text(), re.M | re.S)
                for line in block.splitlines() if len(line) > MAX_LINE]
    assert too_long == []

@pytest.mark.drift
def test_every_step_has_its_chapter_listed_in_the_guide_readme():
    contents = (ROOT / "guide" / "README.md").read_text()
    for chapter in sorted((ROOT / "guide").glob("[0-9][0-9]-*.md")):
        assert f"({chapter.name})" in contents, f"guide/README.md does not link {chapter.name}"


def test_the_conventions_are_linked_where_contributors_look():
    assert "(CONVENTIONS.md)" in (ROOT / "guide" / "README.md").read_text()
    assert "(guide/CONVENTIONS.md)" in (ROOT / "README.md").read_text()


@pytest.fixture
def tree(tmp_path):
    """A tiny steps/ and guide/ pair: one step, one region, one transcript."""
    steps, guide = tmp_path / "steps", tmp_path / "guide"
    (steps / "01-demo" / "wire").mkdir(parents=True)
    (steps / "01-demo" / "server.py").write_text(
        "import os\n\n# region main\ndef main():\n    return 1\n# endregion main\n"
    )
    (steps / "01-demo" / "wire" / "01-hello.out").write_text("> POST /mcp\n")
    (steps / "01-demo" / "wire" / "01-hello.sh").write_text("post <<'JSON'\n{}\nJSON\n")
    guide.mkdir()
    chapter = guide / "01-demo.md"
    chapter.write_text(
        "# Demo\n\n"
        + BLOCK.format(target="01-demo/server.py#main")
        + "\ntext between\n\n"
        + BLOCK.format(target="01-demo/wire/01-hello.out")
    )
    return steps, guide, chapter


def test_sync_rewrites_blocks_then_check_passes(tree):
    steps, guide, chapter = tree
    assert sync(guide, steps, check=True) == ["01-demo.md: quoted code or transcript differs from the steps"]
    assert sync(guide, steps, check=False) == []
    text = chapter.read_text()
    assert "```python\ndef main():\n    return 1\n```" in text
    assert "```console\n$ steps/01-demo/wire/01-hello.sh\n> POST /mcp\n```" in text
    assert "# region" not in text and "import os" not in text
    assert "text between" in text
    assert sync(guide, steps, check=True) == []


def test_a_code_change_makes_the_check_fail(tree):
    steps, guide, _chapter = tree
    sync(guide, steps, check=False)
    server = steps / "01-demo" / "server.py"
    server.write_text(server.read_text().replace("return 1", "return 2"))
    assert sync(guide, steps, check=True) == ["01-demo.md: quoted code or transcript differs from the steps"]


def test_missing_file_and_missing_region_are_reported(tree):
    steps, guide, chapter = tree
    chapter.write_text(BLOCK.format(target="01-demo/nope.py") + BLOCK.format(target="01-demo/server.py#main"))
    assert sync(guide, steps, check=True)[0] == "01-demo.md: no file steps/01-demo/nope.py"
    chapter.write_text(BLOCK.format(target="01-demo/server.py#other") + BLOCK.format(target="01-demo/server.py#main"))
    assert sync(guide, steps, check=True)[0] == "01-demo.md: steps/01-demo/server.py has no region 'other'"


def test_unclosed_include_is_reported(tree):
    steps, guide, chapter = tree
    chapter.write_text(chapter.read_text() + "<!-- include: 01-demo/server.py#main -->\n```\n")
    assert "is not closed" in sync(guide, steps, check=True)[0]


@pytest.mark.parametrize(
    "source,problem",
    [
        ("# region main\nx = 1\n", "region main is never closed"),
        ("# region main\n# endregion main\n# region main\n# endregion main\n", "region 'main' is defined twice"),
        ("x = 1\n# endregion main\n", "endregion 'main' without its region"),
    ],
)
def test_broken_regions_are_reported(tree, source, problem):
    steps, guide, _chapter = tree
    (steps / "01-demo" / "server.py").write_text(source)
    assert any(problem in p for p in sync(guide, steps, check=True))


def test_a_region_no_chapter_quotes_is_reported(tree):
    steps, guide, _chapter = tree
    server = steps / "01-demo" / "server.py"
    server.write_text(server.read_text() + "# region spare\npass\n# endregion spare\n")
    sync(guide, steps, check=False)
    assert sync(guide, steps, check=True) == ["steps/01-demo/server.py#spare: no chapter quotes this region"]


def test_a_transcript_no_chapter_shows_is_reported(tree):
    steps, guide, _chapter = tree
    (steps / "01-demo" / "wire" / "02-more.out").write_text("> GET /mcp\n")
    sync(guide, steps, check=False)
    assert sync(guide, steps, check=True) == ["steps/01-demo/wire/02-more.out: no chapter shows this transcript"]


def test_a_later_copy_of_a_quoted_region_counts_as_quoted(tree):
    steps, guide, _chapter = tree
    later = steps / "02-more"
    later.mkdir()
    (later / "server.py").write_text((steps / "01-demo" / "server.py").read_text())
    sync(guide, steps, check=False)
    assert sync(guide, steps, check=True) == []


def test_a_transcript_without_a_script_is_shown_with_its_python_program(tree):
    steps, guide, chapter = tree
    (steps / "01-demo" / "client.py").write_text("print('>>> hi')\n")
    (steps / "01-demo" / "client.out").write_text(">>> hi\n")
    chapter.write_text(chapter.read_text() + BLOCK.format(target="01-demo/client.out"))
    sync(guide, steps, check=False)
    assert "```console\n$ python3 steps/01-demo/client.py\n>>> hi\n```" in chapter.read_text()


WIRE = """\
> POST /mcp
> Content-Type: application/json
> Accept: application/json, text/event-stream
> Mcp-Session-Id: <session-id>
> Origin: http://localhost:5173
>
{"jsonrpc": "2.0", "id": 1, "method": "ping"}
< HTTP/1.1 200 OK
< Content-Type: application/json
< Content-Length: 36
< Connection: keep-alive
< Allow: POST
<
{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "a body too long for one line"}]}}

> POST /mcp
> Host: evil.example
>
{"jsonrpc":"2.0","id":2}
< HTTP/1.1 200 OK
< Content-Type: text/event-stream
< Cache-Control: no-cache
<
event: message
data: {"jsonrpc": "2.0", "id": 2, "result": {}}

"""

BRIEF = """\
```console
$ steps/01-demo/wire/01-hello.sh
> POST /mcp
> Mcp-Session-Id: <session-id>
> Origin: http://localhost:5173
>
{"jsonrpc": "2.0", "id": 1, "method": "ping"}
< HTTP/1.1 200 OK
< Allow: POST
<
{
  "jsonrpc": "2.0",
  "id": 1,
  "result": {
    "content": [
      {
        "type": "text",
        "text": "a body too long for one line"
      }
    ]
  }
}

> POST /mcp
> Host: evil.example
>
{"jsonrpc":"2.0","id":2}
< HTTP/1.1 200 OK
<
event: message
data: {"jsonrpc": "2.0", "id": 2, "result": {}}
```
Shortened: repeated headers left out, long JSON indented. In full: `cat steps/01-demo/wire/01-hello.out`
"""


def brief_tree(tree, options="brief"):
    steps, guide, chapter = tree
    (steps / "01-demo" / "wire" / "01-hello.out").write_text(WIRE)
    region, transcript = "01-demo/server.py#main", f"01-demo/wire/01-hello.out {options}"
    chapter.write_text(BLOCK.format(target=region) + BLOCK.format(target=transcript))
    return steps, guide, chapter


def test_a_brief_block_keeps_what_matters_and_indents_long_json(tree):
    steps, guide, chapter = brief_tree(tree)
    assert sync(guide, steps, check=False) == []
    assert "<!-- include: 01-demo/wire/01-hello.out brief -->\n" + BRIEF + "<!-- /include -->" in chapter.read_text()
    assert sync(guide, steps, check=True) == []


@pytest.mark.parametrize("width,shown_indented", [(BRIEF_WIDTH, False), (BRIEF_WIDTH + 1, True)])
def test_a_brief_block_indents_a_json_body_only_when_it_is_long(width, shown_indented):
    line = json.dumps({"text": "x" * (width - len('{"text": ""}'))})
    assert len(line) == width
    assert readable(line, flat=False, shorten=True) == (json.dumps(json.loads(line), indent=2) if shown_indented else line)



def test_a_flat_body_too_long_for_any_line_is_indented_and_long_strings_are_cut():
    data = {"path": "Note.md", "text": "y" * (LONG_STRING + 1)}
    result = {"jsonrpc": "2.0", "id": 3, "result": {
        "content": [{"type": "text", "text": json.dumps(data, ensure_ascii=False, indent=2)}],
        "structuredContent": data, "isError": False}}
    line = json.dumps(result)
    assert len(line) > MAX_LINE
    shown = readable(line, flat=True, shorten=True)
    assert max(map(len, shown.splitlines())) <= MAX_LINE
    assert f'"text": "[the structuredContent below, as JSON text: {len(json.dumps(data, indent=2))} characters]"' in shown
    assert f'"text": "{"y" * LONG_STRING}... [{LONG_STRING + 1} characters, cut]"' in shown
    assert readable("data: " + line, flat=True, shorten=True).startswith("data: {\n")
    assert readable(line, flat=True, shorten=False) == json.dumps(result, indent=2)  # nothing cut: all there
    not_as_sent = json.dumps(result, separators=(",", ":"))
    assert readable(not_as_sent, flat=True, shorten=True) == not_as_sent  # only what json.dumps wrote is changed

def test_a_brief_block_says_long_json_was_indented_only_when_it_was(tree):
    steps, guide, chapter = tree
    region, transcript = "01-demo/server.py#main", "01-demo/wire/01-hello.out brief"
    chapter.write_text(BLOCK.format(target=region) + BLOCK.format(target=transcript))
    sync(guide, steps, check=False)
    assert "Shortened: repeated headers left out. In full: `cat" in chapter.read_text()


def test_a_flat_brief_block_leaves_every_body_on_its_line(tree):
    steps, guide, chapter = brief_tree(tree, "brief flat drop=Origin")
    assert sync(guide, steps, check=False) == []
    text = chapter.read_text()
    long_body = next(line for line in WIRE.splitlines() if "a body too long" in line)
    assert len(long_body) > BRIEF_WIDTH and f"<\n{long_body}\n" in text
    assert "Origin:" not in text and "< Content-Length" not in text and "> Mcp-Session-Id: <session-id>\n" in text
    assert "Shortened: repeated headers left out. In full: `cat steps/01-demo/wire/01-hello.out`" in text
    assert sync(guide, steps, check=True) == []


def test_keep_and_drop_change_the_kept_headers_for_one_block(tree):
    steps, guide, chapter = brief_tree(tree, "brief keep=content-type,Connection drop=Origin")
    sync(guide, steps, check=False)
    text = chapter.read_text()
    assert "< Content-Type: application/json\n" in text and "< Content-Type: text/event-stream\n" in text
    assert "< Connection: keep-alive\n" in text and "> Content-Type: application/json\n" in text
    assert "Origin:" not in text and "< Content-Length" not in text and "> Mcp-Session-Id: <session-id>\n" in text


def test_a_drifted_brief_block_fails_the_check(tree):
    steps, guide, chapter = brief_tree(tree)
    sync(guide, steps, check=False)
    chapter.write_text(chapter.read_text().replace("> Mcp-Session-Id: <session-id>\n", ""))
    assert sync(guide, steps, check=True) == ["01-demo.md: quoted code or transcript differs from the steps"]
    sync(guide, steps, check=False)
    out = steps / "01-demo" / "wire" / "01-hello.out"
    out.write_text(out.read_text().replace('"a body too long', '"a changed body too long', 1))
    assert sync(guide, steps, check=True) == ["01-demo.md: quoted code or transcript differs from the steps"]


def stream_of(count: int) -> str:
    """A transcript whose answer is an SSE stream of `count` progress events, then the result."""
    events = "".join(f'event: message\ndata: {{"method": "notifications/progress", "progress": {n}}}\n\n'
                     for n in range(count))
    return ('> POST /mcp\n>\n{"id": 1}\n< HTTP/1.1 200 OK\n<\n' + events
            + 'event: message\ndata: {"id": 1, "result": {}}\n\n')


def test_events_shows_the_first_of_a_long_stream_and_its_last_event(tree):
    steps, guide, chapter = tree
    (steps / "01-demo" / "wire" / "01-hello.out").write_text(stream_of(10))
    chapter.write_text(BLOCK.format(target="01-demo/server.py#main")
                       + BLOCK.format(target="01-demo/wire/01-hello.out brief flat events=2"))
    assert sync(guide, steps, check=False) == []
    text = chapter.read_text()
    assert '"progress": 0}' in text and '"progress": 1}' in text and '"result": {}' in text
    assert '"progress": 2}' not in text and '"progress": 9}' not in text
    assert '"progress": 1}\n\n[8 more events like these]\n\nevent: message\ndata: {"id": 1, "result"' in text
    assert "Shortened: repeated headers left out, 8 events left out. In full:" in text
    assert sync(guide, steps, check=True) == []
    # One event more in the transcript is a drifted block, though the one it adds is left out.
    (steps / "01-demo" / "wire" / "01-hello.out").write_text(stream_of(11))
    assert sync(guide, steps, check=True) == ["01-demo.md: quoted code or transcript differs from the steps"]


def test_events_leaves_a_stream_whole_when_one_event_or_none_would_go(tree):
    steps, guide, chapter = tree
    (steps / "01-demo" / "wire" / "01-hello.out").write_text(stream_of(3))  # 2 shown, the last, and 1 more
    chapter.write_text(BLOCK.format(target="01-demo/server.py#main")
                       + BLOCK.format(target="01-demo/wire/01-hello.out brief flat events=2"))
    sync(guide, steps, check=False)
    text = chapter.read_text()
    assert '"progress": 2}' in text and "more events" not in text and "events left out" not in text


def test_events_never_hides_a_line_that_is_not_an_event(tree):
    steps, guide, chapter = tree
    stream = stream_of(8).replace('"progress": 3}\n\n', '"progress": 3}\nnot an event\n')  # no blank line
    (steps / "01-demo" / "wire" / "01-hello.out").write_text(stream)
    chapter.write_text(BLOCK.format(target="01-demo/server.py#main")
                       + BLOCK.format(target="01-demo/wire/01-hello.out brief flat events=1"))
    sync(guide, steps, check=False)
    text = chapter.read_text()
    assert "\nnot an event\n" in text  # it ends one run and the next begins after it
    assert '"progress": 0}\n\n[2 more events like these]\n\nevent: message\ndata: {"method"' in text
    assert '"progress": 4}\n\n[3 more events like these]\n\nevent: message\ndata: {"id": 1' in text
    assert "5 events left out" in text


@pytest.mark.parametrize(
    "target,problem",
    [
        ("01-demo/wire/01-hello.out brief events=0", "unknown include option 'events=0'"),
        ("01-demo/wire/01-hello.out brief events=two", "unknown include option 'events=two'"),
        ("01-demo/wire/01-hello.out brief events", "unknown include option 'events'"),
        ("01-demo/wire/01-hello.out short", "unknown include option 'short'"),
        ("01-demo/wire/01-hello.out brief keep", "unknown include option 'keep'"),
        ("01-demo/wire/01-hello.out keep=Host", "unknown include option 'keep=Host'"),
        ("01-demo/wire/01-hello.out flat", "unknown include option 'flat'"),
        ("01-demo/wire/01-hello.out brief flat=yes", "unknown include option 'flat=yes'"),
        ("01-demo/server.py#main brief", "brief applies to transcripts"),
    ],
)
def test_wrong_include_options_are_reported(tree, target, problem):
    steps, guide, chapter = tree
    chapter.write_text(BLOCK.format(target=target) + BLOCK.format(target="01-demo/wire/01-hello.out"))
    assert problem in sync(guide, steps, check=True)[0]


def test_only_numbered_chapters_are_synced(tree):
    steps, guide, _chapter = tree
    sync(guide, steps, check=False)
    notes = guide / "CONVENTIONS.md"
    notes.write_text("Example:\n\n```\n<!-- include: 01-demo/server.py#main -->\n<!-- /include -->\n```\n")
    assert sync(guide, steps, check=True) == []
    sync(guide, steps, check=False)
    assert "def main" not in notes.read_text()


def test_a_scratch_copy_of_a_step_is_not_part_of_the_steps(tree):
    steps, guide, _chapter = tree
    copy = steps / "scratch" / "01-demo"
    copy.mkdir(parents=True)
    (copy / "server.py").write_text("# region exercise\npass\n# endregion exercise\n")
    (copy / "02-mine.out").write_text("> GET /mcp\n")
    sync(guide, steps, check=False)
    assert sync(guide, steps, check=True) == []
