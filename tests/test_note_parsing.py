"""Unit tests of step 5's note parsing: frontmatter, hidden text, headings, sections, links, tags.

The cases follow Obsidian's help (obsidianmd/obsidian-help, en/: Properties, Tags,
Internal links, Embed files, Basic formatting syntax, Advanced formatting syntax) and
the syntax cases of the sample vault. The last part feeds random text to every
function: nothing may raise, and nothing may take long.
"""
import random
import sys
import time
from pathlib import Path

import pytest

from helpers import STEPS_DIR, cpu_bounded, step_modules
from manifest import SAMPLE_VAULT

with step_modules(STEPS_DIR / "05-parsing-notes"):
    import frontmatter
    import markdown
    import notes
    from frontmatter import MAX_CHARS, MAX_DEPTH, YamlError, parse_yaml, read_frontmatter, split_frontmatter
    from markdown import (
        chunk_sections,
        find_headings,
        find_links,
        find_tags,
        is_tag_name,
        mask,
        section_text,
        split_sections,
        tag_with_parents,
    )
    from notes import parse_note, property_list, COMMAS, COMMAS_AND_SPACES


def sample(path: str) -> str:
    return (SAMPLE_VAULT / path).read_text(encoding="utf-8")


def sample_note(path: str):
    return parse_note(Path(path).stem, sample(path))


def targets(text: str) -> list[str]:
    return [link.target for link in find_links(text)]


def tag_names(text: str) -> list[str]:
    return [tag.name for tag in find_tags(text)]


# Frontmatter: where it is
def test_frontmatter_is_the_block_between_the_first_two_dash_lines():
    yaml, body, body_line = split_frontmatter("---\ntags: a\n---\n# Title\n")
    assert (yaml, body, body_line) == ("tags: a\n", "# Title\n", 4)


@pytest.mark.parametrize("first_line", ["---js", "---json", "--- yaml", "----", " ---", "--- ", "# ---"])
def test_only_a_first_line_of_exactly_three_dashes_opens_it(first_line):
    text = f"{first_line}\ntitle: x\n---\nbody\n"
    assert split_frontmatter(text) == (None, text, 1)
    assert read_frontmatter(text).data == {}


def test_a_byte_order_mark_before_the_dashes_is_fine_and_not_kept():
    yaml, body, _ = split_frontmatter("\ufeff---\na: 1\n---\nbody")
    assert (yaml, body) == ("a: 1\n", "body")


def test_without_a_closing_line_there_is_no_frontmatter():
    text = "---\ntags: a\n\n# Heading\n"
    assert split_frontmatter(text) == (None, text, 1)


def test_the_closing_line_is_exactly_three_dashes():
    yaml, body, _ = split_frontmatter("---\na: 1\n--- \n----\n---\nbody")
    assert yaml == "a: 1\n--- \n----\n" and body == "body"


def test_dots_do_not_close_the_block_but_end_the_yaml_inside_it():
    assert split_frontmatter("---\na: 1\n...\nbody\n") == (None, "---\na: 1\n...\nbody\n", 1)
    assert read_frontmatter("---\na: 1\n...\n# a comment\n---\nbody").data == {"a": 1}
    broken = read_frontmatter("---\na: 1\n...\nb: 2\n---\nbody")
    assert broken.data == {} and "line 4 of the note" in broken.error and broken.body == "body"


def test_windows_line_endings():
    front = read_frontmatter("---\r\ntags: [a]\r\n---\r\nbody\r\n")
    assert front.data == {"tags": ["a"]} and front.body == "body\r\n"


def test_an_empty_block_is_no_properties_and_no_error():
    front = read_frontmatter("---\n---\nbody")
    assert (front.data, front.error, front.body, front.body_line) == ({}, "", "body", 3)


def test_properties_know_their_line_in_the_note():
    front = read_frontmatter("---\n# c\ntags:\n  - a\nrelated: x\n---\n")
    assert front.key_lines == {"tags": 3, "related": 5}


# Frontmatter: the YAML subset
def test_the_property_types_of_obsidians_help():
    # Properties help: text (with a quoted link), list, number, checkbox, date, date & time
    yaml = """\
title: A New Hope
link: "[[Episode IV]]"
url: https://www.example.com
cast:
  - Mark Hamill
  - Harrison Ford
links:
  - "[[Link]]"
  - "[[Link2]]"
year: 1977
pie: 3.14
favorite: true
reply: false
last: # Indeterminate value; often treated as false
date: 2020-08-21
time: 2020-08-21T10:30:00
"""
    assert parse_yaml(yaml) == {
        "title": "A New Hope",
        "link": "[[Episode IV]]",
        "url": "https://www.example.com",
        "cast": ["Mark Hamill", "Harrison Ford"],
        "links": ["[[Link]]", "[[Link2]]"],
        "year": 1977,
        "pie": 3.14,
        "favorite": True,
        "reply": False,
        "last": None,
        "date": "2020-08-21",  # dates stay text, as Obsidian shows them
        "time": "2020-08-21T10:30:00",
    }


def test_json_frontmatter():
    # Properties help: "you can also define properties using JSON"
    assert parse_yaml('{\n  "tags": ["journal"],\n  "publish": false\n}\n') == {"tags": ["journal"], "publish": False}


@pytest.mark.parametrize(
    "value, expected",
    [
        ("plain text", "plain text"),
        ("'single ''quoted'''", "single 'quoted'"),
        ('"double \\"quoted\\" \\t \\u00e9 \\x41 \\U0001F35E"', 'double "quoted" \t é A 🍞'),
        ('"\\ud83c\\udf5e"', "🍞"),  # JSON's two halves of one character
        ('"\\ud83c"', "\ufffd"),  # half a character is replaced, not kept
        ("'#not a comment'", "#not a comment"),
        ("text # a comment", "text"),
        ("a#b", "a#b"),
        ("12", 12),
        ("-3", -3),
        ("0x1F", 31),
        ("0o17", 15),
        ("007", 7),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        (".inf", float("inf")),
        ("-.INF", float("-inf")),
        ("true", True),
        ("False", False),
        ("null", None),
        ("~", None),
        ("", None),
        ("yes", "yes"),  # YAML 1.2: only true and false are booleans
        ("1:30", "1:30"),
        ("2026-01-14", "2026-01-14"),
        ("'12'", "12"),
        ("!!str 12", "12"),
        ("http://x.com/a#b", "http://x.com/a#b"),
        ("9" * 5000, "9" * 5000),  # too many digits for int(): kept as text
    ],
)
def test_scalars(value, expected):
    assert parse_yaml(f"key: {value}\n") == {"key": expected}


def test_nan():
    value = parse_yaml("key: .nan\n")["key"]
    assert value != value


def test_lists_indented_or_not_and_flow_lists():
    assert parse_yaml("a:\n  - x\n  - y\nb:\n- z\nc: [x, 'y, z', [1, 2], {k: v}]\n") == {
        "a": ["x", "y"],
        "b": ["z"],
        "c": ["x", "y, z", [1, 2], {"k": "v"}],
    }


def test_a_dash_without_a_space_is_a_negative_number_not_an_item():
    assert parse_yaml("a:\n  -5\nb:\n- -5\n- 3\n") == {"a": -5, "b": [-5, 3]}


def test_flow_collections_over_several_lines_with_comments_and_trailing_commas():
    assert parse_yaml("a: [x, # first\n  y,\n]\nb: {k: v,\n  j: [1,\n 2]}\n") == {
        "a": ["x", "y"],
        "b": {"k": "v", "j": [1, 2]},
    }


def test_flow_edge_cases_found_by_comparing_with_pyyaml():
    assert parse_yaml('a: ["x":1, b:, c: ]\n') == {"a": [{"x": 1}, {"b": None}, {"c": None}]}
    assert parse_yaml("a: [&anchor , b]\n") == {"a": [None, "b"]}
    assert parse_yaml("a: [!!str , b]\n") == {"a": ["", "b"]}
    assert parse_yaml("a: {1: x, !!str b c: y}\n") == {"a": {"1": "x", "b c": "y"}}  # keys are text
    for bad in ["a: [|pipe]", "a: [#x]", "a: [x", "a: {k: v", "a: [x] y", "a: [@x]"]:
        with pytest.raises(YamlError):
            parse_yaml(bad + "\n")


def test_nested_maps_by_indentation_and_lists_of_maps():
    yaml = (
        "batch:\n  vessel:\n    size_l: 4\n  tea: {type: black}\nsteps:\n  - name: mix\n    minutes: 5\n  - - nested\n"
    )
    assert parse_yaml(yaml) == {
        "batch": {"vessel": {"size_l": 4}, "tea": {"type": "black"}},
        "steps": [{"name": "mix", "minutes": 5}, ["nested"]],
    }


@pytest.mark.parametrize(
    "header, expected",
    [
        ("|", "line one\n  indented\n\nline three\n"),
        ("|-", "line one\n  indented\n\nline three"),
        ("|+", "line one\n  indented\n\nline three\n\n"),
        (">", "line one\n  indented\n\nline three\n"),
        (">-", "line one\n  indented\n\nline three"),
        ("|2", "  line one\n    indented\n\n  line three\n"),
        ("| # a comment", "line one\n  indented\n\nline three\n"),
    ],
)
def test_block_scalars(header, expected):
    yaml = f"text: {header}\n    line one\n      indented\n\n    line three\n\nnext: 1\n"
    assert parse_yaml(yaml) == {"text": expected, "next": 1}


def test_folded_scalars_join_lines_with_spaces():
    assert parse_yaml("a: >\n  one\n  two\n\n  three\n") == {"a": "one two\nthree\n"}


def test_block_scalar_edge_cases_found_by_comparing_with_pyyaml():
    assert parse_yaml("a: |-\n\n  \nb: 1\n") == {"a": "", "b": 1}  # only blank lines
    assert parse_yaml("a: |+\n  \nb: 1\n") == {"a": "\n", "b": 1}
    assert parse_yaml("a: >1-\n   x\n") == {"a": "  x"}  # more indented than the indicator says
    assert parse_yaml("a: |\n  x") == {"a": "x"}  # no line break after the last line
    with pytest.raises(YamlError):
        parse_yaml("a: >1-#\n b\n")  # a comment needs a space before it


def test_plain_and_quoted_values_may_go_on_over_lines():
    assert parse_yaml("a: one\n  two\n\n  three\nb: 'x\n  y'\nc: \"p\\\n  q\"\n") == {
        "a": "one two\nthree",
        "b": "x y",
        "c": "pq",
    }


def test_comments_anywhere():
    yaml = "# top\ntags: # after a key\n  # between items\n  - a # after an item\n\n# end\n"
    assert parse_yaml(yaml) == {"tags": ["a"]}


def test_a_block_indented_as_a_whole():
    assert parse_yaml("  a: 1\n  b: 2\n") == {"a": 1, "b": 2}


def test_a_value_under_its_key_not_indented_more_is_empty():
    assert parse_yaml("a:\nb: 1\n") == {"a": None, "b": 1}


# Frontmatter: nothing is ever run or expanded
def test_tags_never_construct_anything():
    yaml = "a: !!python/object/apply:os.system ['echo hacked']\nb: !!python/name:os.system\nc: !custom 5\n"
    assert parse_yaml(yaml) == {"a": ["echo hacked"], "b": None, "c": 5}


def test_anchors_are_dropped_and_aliases_stay_text():
    assert parse_yaml("base: &b 5\nother: *b\nlist: [*b, x]\n") == {"base": 5, "other": "*b", "list": ["*b", "x"]}


def test_an_alias_bomb_stays_small():
    yaml = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join([f'*{chr(97 + n)}'] * 9)}]\n" for n in range(8)
    )
    data = parse_yaml(yaml)
    assert data["i"] == ["*h"] * 9


def test_properties_on_keys_are_dropped_too():
    assert parse_yaml("!!str publish: true\n&a aliases:\n  - x\n") == {"publish": True, "aliases": ["x"]}


# Frontmatter: malformed YAML
@pytest.mark.parametrize(
    "yaml, line",
    [
        ("a: 1\n  b: 2\n", 2),  # a ': ' in the continuation of a plain value
        ("a:\n  b: 1\n c: 2\n", 3),  # indented between two levels
        ("a: 1\n- b\n", 2),  # a list item among keys
        ('a: "unclosed\n', 1),
        ("a: 'unclosed\n", 1),
        ("a:\n\tb: 1\n", 2),  # tabs cannot indent YAML
        ("a: 1\na: 2\n", 2),  # keys must be unique
        ("a: b: c\n", 1),
        ("a: - b\n", 1),
        ("a: @x\n", 1),
        ("a: `x`\n", 1),
        ("? complex\n", 1),
        ("%YAML 1.2\na: 1\n", 1),
        ("just text\n", 1),
        ("- a list\n", 1),
        ("a: 1\n--- \nb: 2\n", 2),
        ("a: *x y\n", 1),
        ("a: |x\n", 1),
        ('a: "\\q"\n', 1),
    ],
)
def test_malformed_yaml_raises_with_a_line(yaml, line):
    with pytest.raises(YamlError) as error:
        parse_yaml(yaml)
    assert error.value.line == line and error.value.reason


def test_malformed_frontmatter_keeps_the_body_and_says_why():
    front = read_frontmatter(sample("Ferments/Sauerkraut.md"))
    assert front.data == {}
    assert front.error == "frontmatter not read: line 4 of the note: a ': ' inside a value that is not quoted"
    assert front.body.startswith("# Sauerkraut\n") and front.body_line == 7


# Frontmatter: bounded work
RUNAWAY_CPU_SECONDS = 30.0


def assert_quick(function, *args):
    """function(*args), failing once it has used RUNAWAY_CPU_SECONDS of processor time: these
    inputs take a few seconds at most, a quadratic reading of them minutes."""
    return cpu_bounded(RUNAWAY_CPU_SECONDS, function, *args)


PARSING_FILES = {module.__file__ for module in (frontmatter, markdown, notes)}  # the copies this file calls


class EnoughLines(BaseException):
    """Raised inside the traced call once it has run more lines than the caller asked
    about (a BaseException, so that no `except Exception` in the parser swallows it)."""


def lines_run(function, text: str, limit: float = float("inf")) -> int:
    """How many lines of the parsing modules run for function(text), counted up to just
    past limit: a quadratic path on a large input is stopped, not waited for.

    A measure of work that, unlike a stopwatch, gives the same answer on every machine.
    """
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename not in PARSING_FILES:
            return None
        count += event == "line"
        if count > limit:
            raise EnoughLines
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        function(text)
    except EnoughLines:
        pass
    finally:
        sys.settrace(previous)
    assert count, "no line of the parsing modules ran: the test called another copy"
    return count


def growth(function, make, size: int) -> float:
    """How much more work an input 8 times larger takes: about 8 when the work grows in
    step with the input, about 64 when it grows with its square (counted only up to 10)."""
    small = lines_run(function, make(size))
    return lines_run(function, make(8 * size), limit=10 * small) / small


def read_yaml(yaml: str):
    try:
        parse_yaml(yaml)
    except YamlError:
        pass


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda n: "a:\n" + "- x\n" * n, id="list"),
        pytest.param(lambda n: "a:\n" + "- k: [x, 'y']\n  j: {z: w}\n" * n, id="list of maps"),
        pytest.param(lambda n: "a: [" + "x,\n" * n + "]\n", id="flow list over lines"),
        pytest.param(lambda n: "".join(f"k{i}: v # c\n" for i in range(n)), id="keys"),
        pytest.param(lambda n: "a: |\n" + "  line\n" * n + "b: >\n" + "  w\n\n" * n, id="block scalars"),
        pytest.param(lambda n: "a: x\n" + "  y\n" * n, id="plain over lines"),
        pytest.param(lambda n: 'a: "' + "x\\n\n" * n + "\"\nb: '" + "y\n" * n + "'\n", id="quoted over lines"),
        pytest.param(lambda n: 'a: "' + "x\n" * n, id="unclosed quote"),
        pytest.param(lambda n: "a: [" + "x, [y, {z: " * 10 + "\n" * n, id="unclosed flow"),
    ],
)
def test_frontmatter_work_grows_in_step_with_its_size(make):
    assert growth(read_yaml, make, 200) < 10


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda n: "# H\n[[a]] #b `c` $d$ %%e%% [f](g.md)\n\n" * n, id="mixed"),
        pytest.param(lambda n: "```\n# x\n```\n~~~\n[[y]]\n~~~\n\n    code\n- item\n" * n, id="code"),
        pytest.param(lambda n: "`" + "x `` " * n + "$5 " * n, id="unclosed code and math"),
        pytest.param(lambda n: "%%\n" + "x\n" * n, id="open comment"),
        pytest.param(lambda n: "word " * (50 * n), id="one long line"),
        pytest.param(lambda n: ("line\n" * 20 + "\n") * n, id="long paragraphs"),
    ],
)
def test_body_work_grows_in_step_with_its_size(make):
    assert growth(lambda text: parse_note("T", text).chunks(300), make, 200) < 10


def test_frontmatter_larger_than_the_cap_is_refused_and_the_body_kept():
    text = "---\n" + "key: value\n" * 100_000 + "---\n# Body\n"
    front = assert_quick(read_frontmatter, text)
    assert front.data == {} and "longer than" in front.error and front.body == "# Body\n"


LARGE = MAX_CHARS - 100


@pytest.mark.slow
@pytest.mark.parametrize(
    "yaml",
    [
        pytest.param("".join(f"k{n}: v\n" for n in range(LARGE // 10)), id="many keys"),
        pytest.param("a:\n" + "- x\n" * (LARGE // 4), id="a long list"),
        pytest.param("a:\n" + "- k: v\n  j: w\n" * (LARGE // 16), id="a long list of maps"),
        pytest.param("a: [" + "x, " * (LARGE // 3) + "]\n", id="a long flow list"),
        pytest.param("a: [\n" + "  [x, {y: z}],\n" * (LARGE // 16) + "]\n", id="flow over many lines"),
        pytest.param("a: " + "x" * LARGE + "\n", id="a long line"),
        pytest.param('a: "' + "x\\n" * (LARGE // 3) + '"\n', id="a long quoted line"),
        pytest.param("a: |\n" + "  line\n" * (LARGE // 7), id="a long block scalar"),
        pytest.param("a: |\n" + "\n" * LARGE, id="blank lines in a block scalar"),
        pytest.param("a: x\n" + "  y\n" * (LARGE // 4), id="a long plain value over lines"),
        pytest.param("# c\n" * (LARGE // 4) + "a: 1\n", id="comment lines"),
        pytest.param("a: [x" + " " * LARGE + "]\n", id="spaces"),
    ],
)
def test_large_frontmatter_under_the_cap_is_read_in_linear_time(yaml):
    assert len(yaml) <= MAX_CHARS
    assert isinstance(assert_quick(parse_yaml, yaml), dict)


def test_with_the_cap_lifted_the_work_still_grows_in_step(monkeypatch):
    """Copying the rest of the text at every line costs little inside the cap, and adds
    no line for lines_run to count. Lifted, it shows: 6.5 MB read in about 3 s of
    processor time, where copying the rest at every line takes over two minutes."""
    monkeypatch.setattr(frontmatter, "MAX_CHARS", 10_000_000)
    yaml = "a:\n" + ("- " + "x" * 60 + "\n") * 100_000 + "b: [" + "x,\n" * 100_000 + "]\n"
    assert len(assert_quick(parse_yaml, yaml)["a"]) == 100_000


@pytest.mark.parametrize(
    "yaml",
    [
        "".join(" " * n + f"k{n}:\n" for n in range(500)),
        "a: " + "[" * 100_000 + "\n",
        "a: " + "{a: " * 10_000 + "\n",
        "".join(" " * n + "-\n" for n in range(500)),
        "a:\n" + "  - " * 10_000 + "x\n",
    ],
    ids=["indentation", "flow lists", "flow maps", "dashes on lines", "dashes on one line"],
)
def test_deep_nesting_is_refused_without_recursing_deeply(yaml):
    with pytest.raises(YamlError) as error:
        assert_quick(parse_yaml, yaml[:MAX_CHARS])
    assert f"deeper than {MAX_DEPTH}" in str(error.value)


@pytest.mark.slow
@pytest.mark.parametrize(
    "yaml",
    [
        'a: "' + "x\n" * (LARGE // 2),
        "a: " + "x:" * (LARGE // 2),
        "a: [" + "x," * (LARGE // 2),
        "a: '" + "''" * (LARGE // 2),
    ],
    ids=["unclosed double quote", "colons", "unclosed list", "unclosed single quote"],
)
def test_large_malformed_frontmatter_fails_quickly(yaml):
    with pytest.raises(YamlError):
        assert_quick(parse_yaml, yaml)


# Default properties
@pytest.mark.parametrize(
    "frontmatter, expected",
    [
        ("tags: foo", ["foo"]),
        ("tags: a, b", ["a", "b"]),
        ("tags: a b", ["a", "b"]),
        ("tags: [a, b]", ["a", "b"]),
        ("tags:\n  - a\n  - b", ["a", "b"]),
        ("tags:\n- a\n- b", ["a", "b"]),
        ('tags: ["#a", "#b/c"]', ["a", "b/c"]),
        ("tags: '#a'", ["a"]),  # unquoted, #a would be a YAML comment
        ("tags: [y1984, 1984, '1984']", ["y1984"]),  # at least one non-digit
        ("tags: [ok, 'not ok!', {a: b}, true, null]", ["ok", "not"]),
        ("tags:", []),
        ("tags: [Tag, tag, TAG]", ["Tag"]),  # the first spelling wins
    ],
)
def test_tags_property_in_every_form(frontmatter, expected):
    note = parse_note("n", f"---\n{frontmatter}\n---\n")
    assert [tag.name for tag in note.tags] == expected
    assert all(tag.in_frontmatter and tag.line == 2 for tag in note.tags)


def test_aliases_and_cssclasses():
    note = parse_note("n", "---\naliases: Bulk, First rise\ncssclasses: [wide, 'cards dense']\n---\n")
    assert note.aliases == ["Bulk", "First rise"] and note.cssclasses == ["wide", "cards", "dense"]
    note = parse_note("n", "---\naliases:\n  - Doggo\n  - 1984\n---\n")
    assert note.aliases == ["Doggo", "1984"]


def test_property_list_takes_any_form():
    assert property_list(None, COMMAS) == []
    assert property_list("a, b c", COMMAS) == ["a", "b c"]
    assert property_list(["a, b", 3, 2.5, True, None, {"k": 1}], COMMAS_AND_SPACES) == ["a", "b", "3", "2.5"]


def test_links_in_properties_are_reported_as_such():
    note = parse_note(
        "n", '---\nrelated: "[[Koji]]"\nlinks:\n  - "[[A#H|shown]]"\n  - x\nnested: {k: ["![[img.png]]"]}\n---\n[[B]]\n'
    )
    assert [
        (link.target, link.subpath, link.display, link.embed, link.from_property, link.line) for link in note.links
    ] == [
        ("Koji", "", "", False, "related", 2),
        ("A", "H", "shown", False, "links", 3),
        ("img.png", "", "", True, "nested", 6),
        ("B", "", "", False, "", 8),
    ]


# Hidden text: code, comments, math
def test_mask_keeps_length_and_line_breaks():
    text = "a `code` b\n```\n# x\n```\n%% c %% d $m$ <!-- h -->\n"
    masked = mask(text)
    assert len(masked) == len(text) and [i for i, c in enumerate(masked) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]
    assert masked.split("\n") == ["a        b", "   ", "   ", "   ", " " * 8 + "d" + " " * 15, ""]


@pytest.mark.parametrize(
    "text",
    [
        "```\n# no\n```",
        "~~~\n# no\n~~~",
        "```python\n# no\n```",
        "````\n```\n# no\n```\n# no\n````",  # the closing fence is at least as long
        "~~~\n```\n# no\n~~~",  # and made of the same character
        "```\n# no\n``` not a closer\n# no\n```",  # and has no info string
        "- item\n\n  ```\n  # no\n  ```",  # a fence inside a list item
        "> ```\n> # no\n> ```",  # inside a callout
        "%%\n# no\n%%",
        "%% # no %%",
        "<!--\n# no\n-->",
        "$$\n# no\n$$",
        "text\n\n    # no, indented code",
    ],
)
def test_hidden_lines_are_not_headings(text):
    assert find_headings(text + "\n# yes") == [find_headings("# yes", first_line=text.count("\n") + 2)[0]]


@pytest.mark.parametrize("opening", ["```", "~~~~", "%%", "<!--", "text %%"])
def test_a_fence_or_comment_never_closed_hides_the_rest_of_the_note(opening):
    text = f"{opening}\n# no\n[[No]] #no\n"
    assert find_headings(text) == [] and find_links(text) == [] and find_tags(text) == []


def test_a_quoted_fence_ends_with_its_callout():
    assert [h.text for h in find_headings("> ```\n> code\n# yes\n")] == ["yes"]


def test_a_backtick_fence_with_a_backtick_in_its_info_string_is_no_fence():
    assert [h.text for h in find_headings("``` a`b\n# yes\n")] == ["yes"]


def test_indented_text_in_a_list_or_a_paragraph_is_not_code():
    assert tag_names("- item\n\n    #yes in the item\n") == ["yes"]
    assert tag_names("paragraph\n    #yes continued\n") == ["yes"]
    assert tag_names("text\n\n    #no code\n") == []


@pytest.mark.parametrize(
    "text, hidden",
    [
        ("a `#no` b", "`#no`"),
        ("a ``#no ` still`` b", "``#no ` still``"),
        ("a `unclosed #yes", ""),
        ("a ``x` #yes", ""),  # a run of two is closed by a run of two only
        ("a \\`x #yes \\` b", ""),  # an escaped backtick opens nothing
        ("a %%#no%% b", "%%#no%%"),
        ("a <!-- #no --> b", "<!-- #no -->"),
        ("a $#no$ b", "$#no$"),
        ("a $$#no$$ b", "$$#no$$"),
        ("costs $5 and $10 #yes", ""),  # not math: no closing $ after a non-space
        ("from $20-$30 #yes", ""),  # not math: a closing $ is not followed by a digit
        ("a $ #yes $ b", ""),  # not math: a space after the opening $
        ("price $$ #yes", ""),  # no $$ after it: not math
        ("`%%` #yes %% no", ("`%%`", "%% no")),  # code first, then the comment
    ],
)
def test_inline_hidden_text(text, hidden):
    expected = text
    for part in [hidden] if isinstance(hidden, str) else hidden:
        expected = expected.replace(part, " " * len(part)) if part else expected
    assert mask(text) == expected
    assert ("yes" in tag_names(text)) == ("#yes" in text)


# Headings and sections
def test_headings_levels_and_text():
    text = "# One\n## Two ##\n###### Six\n####### seven\n#tag\n#\n  ### Indented\n\\# escaped\n"
    assert [(h.level, h.text, h.line) for h in find_headings(text, first_line=5)] == [
        (1, "One", 5),
        (2, "Two", 6),
        (6, "Six", 7),
        (1, "", 10),
        (3, "Indented", 11),
    ]


def test_a_heading_keeps_what_is_written_in_it():
    assert find_headings("## Using it in [[Miso]] with `code` # x\n")[0].text == "Using it in [[Miso]] with `code` # x"


def test_sections_carry_their_heading_path():
    text = "intro\n\n# A\na text\n## B\nb text\n### C\nc\n## D\nd\n# E\n"
    sections = split_sections(text, first_line=3)
    assert [(s.heading, s.level, s.path, s.line) for s in sections] == [
        ("", 0, [], 3),
        ("A", 1, ["A"], 5),
        ("B", 2, ["A", "B"], 7),
        ("C", 3, ["A", "B", "C"], 9),
        ("D", 2, ["A", "D"], 11),
        ("E", 1, ["E"], 13),
    ]
    assert sections[0].text == "intro" and sections[2].text == "## B\nb text" and sections[5].text == "# E"


def test_no_text_before_the_first_heading_gives_no_section_for_it():
    assert [s.heading for s in split_sections("\n\n# A\nx")] == ["A"]
    assert split_sections("") == [] and [s.line for s in split_sections("\n\nonly text")] == [3]


def test_one_section_by_heading_with_its_subsections():
    note = sample_note("Bread/Basic country loaf.md")
    day_1 = note.section("Day 1")
    assert day_1.startswith("## Day 1\n\n### Timing") and day_1.rstrip().endswith(
        "read [[Bulk fermentation]] before changing it."
    )
    assert note.section("day 2#timing").startswith(
        "### Timing\n\n- Straight from the fridge"
    )  # like [[Note#Day 2#Timing]]
    assert note.section("Basic country loaf#Timing").startswith("### Timing\n\n- 08:00 levain")  # the first Timing
    assert note.section("Day 2#Mixing") is None and note.section("Nowhere") is None and note.section("") is None


@pytest.mark.parametrize("wanted", ["Properties", "properties", "[[Properties]]", "Day 1#Properties"])
def test_a_heading_that_holds_a_link_is_found_by_the_text_it_shows(wanted):
    text = "## Day 1\n### [[Properties]]\nprops\n### [[Views#Table|Table views]] here\ntable\n"
    assert section_text(text, wanted) == "### [[Properties]]\nprops"
    assert section_text(text, "Table views here") == "### [[Views#Table|Table views]] here\ntable"
    assert section_text(text, "Views") is None  # the target hidden behind shown text is not the heading


def test_section_text_skips_levels_in_a_heading_path():
    text = "# A\n## B\n### C\nc text\n# D\n"
    assert section_text(text, "A#C") == "### C\nc text" and section_text(text, "C#A") is None


def test_chunks_stand_alone():
    sections = split_sections("# A\n## B\nsome text\n\nmore text\n")
    chunks = chunk_sections("Title", sections, max_chars=200)
    assert [(c.text, c.path, c.line) for c in chunks] == [("Title > A > B\n\nsome text\n\nmore text", ["A", "B"], 3)]


def test_long_sections_are_cut_between_paragraphs():
    paragraphs = [f"paragraph {n} " + "word " * 30 for n in range(20)]
    text = "# H\n" + "\n\n".join(paragraphs)
    chunks = chunk_sections("T", split_sections(text), max_chars=500)
    assert len(chunks) > 1 and all(len(c.text) <= 500 and c.text.startswith("T > H\n\n") for c in chunks)
    assert [p.strip() for c in chunks for p in c.text.split("\n\n")[1:]] == [p.strip() for p in paragraphs]
    assert chunks[1].line == 2 + 2 * (len(chunks[0].text.split("\n\n")) - 1)


@pytest.mark.parametrize(
    "body",
    [
        "word " * 10_000,  # one giant line
        "x" * 50_000,  # one giant word
        "line\n" * 10_000,  # one giant paragraph of short lines
        ("y" * 3000 + "\n") * 5,  # a paragraph of long lines
        " " * 10_000 + "x",
    ],
    ids=["giant line", "giant word", "giant paragraph", "long lines", "spaces"],
)
def test_no_chunk_is_ever_longer_than_the_cap(body):
    chunks = assert_quick(chunk_sections, "T" * 5000, split_sections("# " + "H" * 5000 + "\n" + body), 300)
    assert chunks and all(len(c.text) <= 300 for c in chunks)
    assert "".join(c.text.split("\n\n", 1)[1] for c in chunks).replace("\n", "").replace(" ", "") == body.replace(
        "\n", ""
    ).replace(" ", "")


# Links
@pytest.mark.parametrize(
    "written, target, subpath, display",
    [
        # Internal links help
        ("[[Three laws of motion]]", "Three laws of motion", "", ""),
        ("[[Three laws of motion.md]]", "Three laws of motion", "", ""),
        ("[[Projects/Three laws of motion]]", "Projects/Three laws of motion", "", ""),
        ("[[#Preview a linked file]]", "", "Preview a linked file", ""),
        ("[[About Obsidian#Links are first-class citizens]]", "About Obsidian", "Links are first-class citizens", ""),
        (
            "[[Help and support#Questions and advice#Report bugs]]",
            "Help and support",
            "Questions and advice#Report bugs",
            "",
        ),
        ("[[2023-01-01#^37066d]]", "2023-01-01", "^37066d", ""),
        ("[[Example|Custom name]]", "Example", "", "Custom name"),
        ("[[Example#Details|Section name]]", "Example", "Details", "Section name"),
        ("[[Figure 1.png]]", "Figure 1.png", "", ""),
        (
            "[[Basic formatting syntax\\|Markdown syntax]]",
            "Basic formatting syntax",
            "",
            "Markdown syntax",
        ),  # in a table
        ("[Three laws of motion](Three%20laws%20of%20motion.md)", "Three laws of motion", "", "Three laws of motion"),
        ("[Three laws of motion](Three%20laws%20of%20motion)", "Three laws of motion", "", "Three laws of motion"),
        ("[t](Projects/Three%20laws%20of%20motion.md)", "Projects/Three laws of motion", "", "t"),
        ("[Section name](Example.md#Details)", "Example", "Details", "Section name"),
        ("[t](<Kitchen/Dutch oven (cast iron).md>)", "Kitchen/Dutch oven (cast iron)", "", "t"),
        ("[t](Dutch%20oven%20(cast%20iron).md)", "Dutch oven (cast iron)", "", "t"),
        ("[t](../Other/Note.md)", "../Other/Note", "", "t"),
        ('[t](Note.md "a title")', "Note", "", "t"),
        ("[t](#Heading%20here)", "", "Heading here", "t"),
    ],
)
def test_link_forms(written, target, subpath, display):
    [link] = find_links(f"see {written} here")
    assert (link.target, link.subpath, link.display, link.embed) == (target, subpath, display, False)
    assert link.markdown == (not written.startswith("[["))


@pytest.mark.parametrize(
    "written, target, subpath, display",
    [
        # Embed files help
        ("![[Internal links]]", "Internal links", "", ""),
        ("![[Internal links#^b15695]]", "Internal links", "^b15695", ""),
        ("![[Engelbart.jpg|100x145]]", "Engelbart.jpg", "", "100x145"),
        ("![[Engelbart.jpg#outline|100]]", "Engelbart.jpg", "outline", "100"),
        ("![[Document.pdf#page=3]]", "Document.pdf", "page=3", ""),
        ("![[My canvas.canvas]]", "My canvas.canvas", "", ""),
        ("![alt text](Attachments/chart.png)", "Attachments/chart.png", "", "alt text"),
    ],
)
def test_embeds(written, target, subpath, display):
    [link] = find_links(written)
    assert (link.target, link.subpath, link.display, link.embed) == (target, subpath, display, True)


def test_a_block_link_names_its_block():
    assert find_links("[[Note#^abc-1]]")[0].block == "abc-1" and find_links("[[Note#abc]]")[0].block == ""


@pytest.mark.parametrize(
    "written",
    [
        "[Obsidian Help](https://help.obsidian.md)",
        "[Note](obsidian://open?vault=MainVault&file=Note.md)",
        "[My Note](<obsidian://open?vault=MainVault&file=My Note.md>)",
        "![250](https://publish-01.obsidian.md/access/Engelbart.jpg)",
        "[mail](mailto:a@b.c)",
        "[x](//host/path)",
        "[empty]()",
        "[[]]",
        "[[|alias only]]",
        "[[#]]",
        "https://example.com/Note.md",
        "<https://example.com>",
        "[not a link] (Note.md)",
        "[^footnote]",
        "[[line\nbreak]]",
    ],
)
def test_not_vault_links(written):
    assert find_links(written) == []


@pytest.mark.parametrize(
    "text",
    [
        "```\n[[No]] [t](No.md)\n```",
        "~~~\n![[No]]\n~~~",
        "text\n\n    [[No]] indented code",
        "`[[No]]` and ``[t](No.md)``",
        "%%[[No]]%% and %%\n[[No]]\n%%",
        "<!-- [[No]] -->",
        "$[[No]]$ and $$\n[[No]]\n$$",
    ],
)
def test_no_links_in_code_comments_or_math(text):
    assert find_links(text + "\n[[Yes]]") == [find_links("[[Yes]]", first_line=text.count("\n") + 2)[0]]


def test_links_in_order_with_their_lines():
    text = "[[A]] [b](B.md)\n\n> [!note] Callout\n> ![[C#^x]] and [[D|d]]\n"
    assert [(link.target, link.line) for link in find_links(text, first_line=10)] == [
        ("A", 10),
        ("B", 10),
        ("C", 13),
        ("D", 13),
    ]


def test_wikilink_text_comes_from_the_note_not_the_mask():
    [link] = find_links("[[Note|with `code` in it]]")
    assert link.display == "with `code` in it"


def test_a_markdown_link_around_code_is_read_whole():
    [link] = find_links("[see `]` here](Note.md)")
    assert (link.target, link.display) == ("Note", "see `]` here")


# Tags
@pytest.mark.parametrize(
    "text, tags",
    [
        # Tags help
        ("#meeting", ["meeting"]),
        ("#inbox/to-read and #inbox/processing", ["inbox/to-read", "inbox/processing"]),
        ("#1984 is not a tag but #y1984 is", ["y1984"]),
        ("#camelCase #PascalCase #snake_case #kebab-case", ["camelCase", "PascalCase", "snake_case", "kebab-case"]),
        ("#🍞 and #café and #ферментация and #発酵", ["🍞", "café", "ферментация", "発酵"]),
        # where a tag may start
        ("text #a", ["a"]),
        ("text\t#a", ["a"]),
        ("a#b", []),
        ("(#a) [#b] '#c' \\#d", []),
        ("#a#b", ["a", "b"]),
        ("#sourdough#underproofed", ["sourdough", "underproofed"]),
        ("x#a#b", []),
        ("##a", []),
        # where it ends
        ("#a.b #c, #d! #e? #f: #g; #h) #i'", ["a", "c", "d", "e", "f", "g", "h", "i"]),
        ("#a…b #c—d", ["a", "c"]),  # general punctuation ends a tag too
        ("#发酵。下一句 #泡菜，好 #味噌！ #a：b #c（d）", ["发酵", "泡菜", "味噌", "a", "c"]),  # CJK punctuation too
        ("#cook👩\u200d🍳 #x\u200dy", ["cook👩\u200d🍳", "x\u200dy"]),  # a zero-width joiner holds an emoji together
        ("#a\u200bb #c\u2060d", ["a", "c"]),  # other invisible marks of that block still end a tag
        ("#a/b/c", ["a/b/c"]),
        # what is not a tag
        ("# Heading", []),
        ("#", []),
        ("#123 #1/2 #_", ["1/2", "_"]),
        ("http://x.com/#frag and https://en.wikipedia.org/wiki/Kimchi#Varieties", []),
        ("[[Note#heading]] [[#heading]] [[Note #x]] [[Note|#y]]", []),
        ("[t](#heading) [t](Note.md#heading)", []),
        ("`#code` ``#code`` %%#comment%% <!-- #html --> $#math$", []),
        ("C# and issue#12 and jar #3", []),
    ],
)
def test_inline_tags(text, tags):
    assert tag_names(text) == tags


def test_tags_in_headings_callouts_and_lists_count():
    text = "## Heading #one\n> [!note] Title\n> body #two\n- item #three\n"
    assert [(t.name, t.line) for t in find_tags(text, first_line=4)] == [("one", 4), ("two", 6), ("three", 7)]


def test_no_tags_in_fenced_or_indented_code():
    assert tag_names("```\n#no\n```\n~~~\n#no\n~~~\n\n    #no\n") == []


def test_tags_are_compared_without_case_and_keep_their_first_spelling():
    note = parse_note("n", "---\ntags: [Sourdough]\n---\n#sourdough #SOURDOUGH #Other #other\n")
    assert [(t.name, t.key, t.in_frontmatter) for t in note.tags] == [
        ("Sourdough", "sourdough", True),
        ("Other", "other", False),
    ]


def test_nested_tags_have_their_parents():
    assert parse_note("n", "---\ntags: [Ferment/Lacto]\n---\n#a/b/c #x\n").tag_keys() == {
        "ferment",
        "ferment/lacto",
        "a",
        "a/b",
        "a/b/c",
        "x",
    }
    assert tag_with_parents("a/b/c") == ["a", "a/b", "a/b/c"]
    assert tag_with_parents("a") == ["a"] and tag_with_parents("a//b/") == ["a", "a/b"]


def test_tag_names():
    assert is_tag_name("y1984") and is_tag_name("a-b_c/d") and is_tag_name("🍞")
    assert not any(is_tag_name(name) for name in ["", "1984", "a b", "a.b", "a#b", "a,b"])


# The sample vault, case by case
def test_sample_frontmatter_forms():
    assert sample_note("Bread/Focaccia.md").frontmatter == {
        "tags": ["bread", "#sourdough", "weekend"],
        "created": "2026-02-15",
        "hydration": 80,
        "servings": 8,
    }
    assert [t.name for t in sample_note("Bread/Focaccia.md").tags] == ["bread", "sourdough", "weekend", "🍞"]
    assert [t.name for t in sample_note("Bread/Bulk fermentation.md").tags] == ["sourdough", "technique"]
    assert sample_note("Bread/Bulk fermentation.md").aliases == ["Bulk", "First rise"]
    assert sample_note("Bread/Troubleshooting.md").aliases == ["Bread problems", "Why is my loaf dense"]
    assert (
        sample_note("Ferments/Koji.md").frontmatter["summary"].startswith("Steamed rice grown with Aspergillus oryzae")
    )
    assert sample_note("Ferments/Koji.md").frontmatter["summary"].endswith("before it turns green.\n")
    assert sample_note("Ferments/Kombucha.md").frontmatter["batch"] == {
        "vessel": {"size_l": 4, "material": "glass"},
        "tea": {"type": "black", "grams_per_litre": 8},
        "sugar_g_per_litre": 80,
        "starter_percent": 15,
    }
    assert sample_note("Bread/Basic country loaf.md").frontmatter["favorite"] is True  # after a comment line
    assert sample_note("Home.md").frontmatter["title"] == "Kitchen vault: home"


def test_sample_js_fence_is_body_not_frontmatter():
    note = sample_note("Bread/Rye bread.md")
    assert note.frontmatter == {} and note.frontmatter_error == "" and note.body.startswith("---js\n")
    assert [t.name for t in note.tags] == ["rye", "bread/rye"]


def test_sample_malformed_frontmatter():
    note = sample_note("Ferments/Sauerkraut.md")
    assert note.frontmatter == {} and note.frontmatter_error and note.tags == []
    assert [h.text for h in note.outline] == ["Sauerkraut", "Salt", "Method", "Timing"]


def test_sample_links_of_every_kind():
    links = {
        (link.target, link.subpath, link.display, link.embed, link.markdown) for link in sample_note("Home.md").links
    }
    assert ("Glossary", "", "", False, False) in links  # [[Glossary.md]]
    assert ("Bread/Basic country loaf", "", "the country loaf", False, True) in links  # %20
    assert ("Kitchen/Dutch oven (cast iron)", "", "Dutch oven notes", False, True) in links  # <...>
    assert ("Ferments/Troubleshooting", "", "Ferment troubleshooting", False, False) in links
    assert ("", "Day 1", "", False, False) in {
        (link.target, link.subpath, link.display, link.embed, link.markdown)
        for link in sample_note("Bread/Basic country loaf.md").links
    }
    troubleshooting = sample_note("Bread/Troubleshooting.md").links
    assert [(link.target, link.subpath, link.display, link.embed) for link in troubleshooting] == [
        ("crumb-chart.svg", "", "300", True),
        ("Sourdough starter", "^peak-signs", "", False),
        ("Bread/Basic country loaf", "Day 1#Bulk", "", False),
    ]
    assert [(link.target, link.embed) for link in sample_note("Bread/Baker's percentages.md").links] == [
        ("Glossary", True),
        ("Basic country loaf", False),
        ("hydration-table.csv", True),
        ("hydration-table.csv", False),
    ]
    assert sample_note("Ferments/Miso.md").links[0].from_property == "related"


def test_sample_code_hides_headings_links_and_tags():
    scale = sample_note("Kitchen/Digital scale.md")
    assert [h.text for h in scale.outline] == [
        "Digital scale",
        "Two scales",
        "The `tare` button",
        "Computing a formula",
        "Calibration",
    ]
    assert "Not A Link" not in [link.target for link in scale.links] and not any(
        t.name.startswith("hashtag") for t in scale.tags
    )
    template = sample_note("Kitchen/Log template.md")  # a four-backtick fence around a three-backtick one
    assert [h.text for h in template.outline] == ["Log template"] and [link.target for link in template.links] == [
        "Bulk fermentation"
    ]
    assert [t.name for t in template.tags] == ["template"]
    box = sample_note("Kitchen/Proofing box.md")  # a tilde fence, and C#, issue#12 in prose
    assert [t.name for t in box.tags] == ["equipment", "temperature"]
    assert [h.text for h in box.outline] == ["Proofing box", "Options I have tried", "Checking what it actually did"]


def test_sample_comments_hide_headings_links_and_tags():
    miso = sample_note("Ferments/Miso.md")
    assert [h.text for h in miso.outline] == ["Miso", "Ratios I use", "Method"]
    assert "The Noma Guide to Fermentation (notes)" not in [link.target for link in miso.links]
    assert [t.name for t in miso.tags] == ["miso", "koji", "ferment/long"]
    kimchi = sample_note("Ferments/Kimchi.md")  # <!-- #draft ... -->, and a URL with #Varieties
    assert [t.name for t in kimchi.tags] == ["ferment/lacto", "kimchi", "korean"]
    loaf = sample_note("Bread/Basic country loaf.md")  # %% inline comment %%
    assert [link.target for link in loaf.links][:1] == ["Baker's percentages"]


def test_sample_math_and_escapes():
    percentages = sample_note("Bread/Baker's percentages.md")
    assert [t.name for t in percentages.tags] == ["bread", "math", "reference"]  # not "text" from \#\text
    airlocks = sample_note("Kitchen/Fermentation weights and airlocks.md")  # \#batch-two, jar #3
    assert airlocks.tags == []


def test_sample_tags_everywhere():
    assert [t.name for t in sample_note("Journal/2026-03-21 Bake log.md").tags][-1:] == ["underproofed"]
    assert [t.name for t in sample_note("Journal/2026-03-28 Ferment log.md").tags] == [
        "ферментация",
        "ferment/lacto",
        "kombucha",
    ]
    assert [t.name for t in sample_note("Journal/2026-W14 Weekly plan.md").tags] == ["plan", "weekly", "y2026"]
    assert [t.name for t in sample_note("Ferments/Koji.md").tags] == ["koji", "ferment/mold", "発酵"]
    assert [t.name for t in sample_note("Ferments/Crème fraîche.md").tags] == ["dairy", "ferment", "café"]
    assert [t.name for t in sample_note("Ferments/Kombucha.md").tags] == ["kombucha", "ferment"]  # and in a callout


def test_sample_notes_without_frontmatter():
    note = sample_note("Inbox/Try tangzhong.md")
    assert note.frontmatter == {} and note.body_line == 1 and [s.path for s in note.sections] == [[]]
    assert [link.target for link in note.links] == ["Whole wheat sandwich loaf", "Tangzhong", "Pizza dough"]


def test_every_sample_note_parses_and_chunks():
    for path in SAMPLE_VAULT.rglob("*.md"):
        note = parse_note(path.stem, path.read_text(encoding="utf-8"))
        assert note.sections and all(len(chunk.text) <= 2000 for chunk in note.chunks())
        assert all(chunk.text.startswith(path.stem) for chunk in note.chunks())


# Random input: never raises, never hangs
ALPHABET = list("ab #-:|>[]{}\"'`~$%!&*?,.^\\/\n\t ") + [
    "\n---\n",
    "[[",
    "]]",
    "```",
    "%%",
    "<!--",
    "-->",
    "$$",
    "é",
    "🍞",
]
YAML_PIECES = [
    "key: ",
    "- ",
    "  ",
    "\n",
    "[",
    "]",
    "{",
    "}",
    ",",
    ": ",
    "'",
    '"',
    "#",
    "|",
    ">",
    "&a ",
    "*a",
    "!!str ",
    "\t",
    "...",
    "x",
    "1",
]


def random_text(rng: random.Random, pieces: list[str], size: int) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, size)))


def test_random_notes_never_raise():
    rng = random.Random(20260405)
    started = time.process_time()
    for _ in range(1500):
        text = random_text(rng, ALPHABET, 300)
        if rng.random() < 0.5:
            text = "---\n" + random_text(rng, YAML_PIECES, 60) + "\n---\n" + text
        note = parse_note("random", text)
        assert isinstance(note.frontmatter, dict) and (note.frontmatter == {} or not note.frontmatter_error)
        masked = mask(note.body)
        assert len(masked) == len(note.body) and masked.count("\n") == note.body.count("\n")
        assert all(len(chunk.text) <= 200 for chunk in note.chunks(200))
    assert time.process_time() - started < RUNAWAY_CPU_SECONDS


def test_random_yaml_raises_nothing_but_yaml_errors():
    rng = random.Random(1977)
    for _ in range(3000):
        try:
            assert isinstance(parse_yaml(random_text(rng, YAML_PIECES, 80)), dict)
        except YamlError as error:
            assert error.line >= 1 and error.reason


def test_mutated_sample_frontmatter_raises_nothing_but_yaml_errors():
    rng = random.Random(2026)
    blocks = [split_frontmatter(p.read_text(encoding="utf-8"))[0] for p in SAMPLE_VAULT.rglob("*.md")]
    blocks = [block for block in blocks if block]
    for _ in range(3000):
        text = rng.choice(blocks)
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(YAML_PIECES) + text[at + rng.randint(0, 2) :]
        try:
            parse_yaml(text)
        except YamlError:
            pass


@pytest.mark.slow
@pytest.mark.parametrize(
    "body",
    [
        "`" * 2000 + "x" + "``" * 1000,  # backtick runs of many lengths, none closed
        "".join("`" * n + " " for n in range(1, 400)),
        "$a" + "$1" * 50_000,  # a $ that looks like a closer everywhere but is followed by digits
        "%%" * 50_000,
        "<!--" * 30_000,
        "[[" * 50_000 + "]]",
        "[" * 50_000 + "](" * 50_000,
        "#a" * 50_000,
        "# heading\n" * 20_000,
        "```\n" * 20_000,
        "- item\n    code\n" * 10_000,
        "> " * 30_000 + "```",
        ("x " * 100 + "\n") * 5_000,
        "# H\n" + "text [[link]] [md](n.md) #tag `code` $m$ %%c%%\n\n" * 30_000,
        "#a " * 200_000,
        "[[a]] [b](c.md) " * 100_000,
    ],
    ids=[
        "unclosed backtick runs",
        "backtick runs of every length",
        "dollars before digits",
        "comment markers",
        "html comment openers",
        "link openers",
        "link text openers",
        "tags",
        "headings",
        "fences",
        "list and code",
        "quote markers",
        "long text",
        "a 1.5 MB note",
        "many tags",
        "many links",
    ],
)
def test_adversarial_bodies_take_linear_time(body):
    note = assert_quick(parse_note, "T", body)
    assert_quick(note.chunks, 500)


@pytest.mark.slow
@pytest.mark.parametrize("find", [find_tags, find_links])
def test_matches_far_apart_in_a_long_text_take_linear_time(find):
    """Copying the rest of the text at every match is cheap in a short text, and takes
    a minute here: 100,000 matches in 8 MB."""
    text = (" #tag [[a]]" + " " * 69) * 100_000
    assert len(assert_quick(find, text)) == 100_000


def test_an_alias_in_a_list_keeps_its_comma():
    note = parse_note("n", '---\naliases: ["Doe, Jane", 1984, true, "  "]\n---\n')
    assert note.aliases == ["Doe, Jane", "1984"]
    assert parse_note("n", "---\naliases: Doe, Jane\n---\n").aliases == ["Doe", "Jane"]


def test_a_first_heading_that_repeats_the_title_is_said_once_in_chunks():
    note = parse_note("Focaccia", "# Focaccia\n\nintro\n\n## Method\n\nbake\n")
    assert [chunk.text.split("\n")[0] for chunk in note.chunks()] == ["Focaccia", "Focaccia > Method"]
    assert [chunk.path for chunk in note.chunks()] == [[], ["Method"]]
    other = parse_note("Notes", "# Bread\n\nx\n")
    assert other.chunks()[0].text.startswith("Notes > Bread\n")
