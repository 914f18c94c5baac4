"""Compare the step 5 frontmatter parser with PyYAML on every frontmatter block of a vault.

Not part of the test suite (it needs PyYAML, which the project does not use):

    python3 -m venv /tmp/yamlcmp && /tmp/yamlcmp/bin/pip install pyyaml
    /tmp/yamlcmp/bin/python tests/compare_frontmatter.py /path/to/vault

Both readings must agree: the same properties, or both calling the block malformed.
Differences that are decisions, not bugs, are normalised first: PyYAML turns dates into
date objects where ours keeps the text; keys are text in ours.
"""
import datetime
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "steps" / "05-parsing-notes"))
from frontmatter import YamlError, parse_yaml, split_frontmatter  # noqa: E402


def pyyaml_reading(text: str):
    """PyYAML's properties, or the string 'malformed'."""
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError) as error:
        return "malformed", str(error).splitlines()[0]
    if data is None:
        return {}, ""
    if not isinstance(data, dict):
        return "malformed", f"not a map but {type(data).__name__}"
    return data, ""


def our_reading(text: str):
    try:
        return parse_yaml(text), ""
    except YamlError as error:
        return "malformed", str(error)


def same(ours, theirs) -> bool:
    if isinstance(theirs, (datetime.date, datetime.datetime)):
        return isinstance(ours, str) and yaml.safe_load(ours) == theirs  # dates stay text
    if isinstance(theirs, dict):
        if not isinstance(ours, dict) or len(ours) != len(theirs):
            return False
        return all(key_text(k) in ours and same(ours[key_text(k)], v) for k, v in theirs.items())
    if isinstance(theirs, list):
        return isinstance(ours, list) and len(ours) == len(theirs) and all(map(same, ours, theirs))
    if isinstance(theirs, float) and theirs != theirs:  # nan
        return isinstance(ours, float) and ours != ours
    return type(ours) is type(theirs) and ours == theirs


def key_text(key) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return "" if key is None else str(key)


def main(vault: Path) -> int:
    blocks = agree = both_malformed = 0
    disagreements = []
    for path in sorted(vault.rglob("*.md")):
        if any(part.startswith(".") for part in path.relative_to(vault).parts):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        block, _body, _line = split_frontmatter(text)
        if block is None:
            continue
        blocks += 1
        (ours, our_reason), (theirs, their_reason) = our_reading(block), pyyaml_reading(block)
        if ours == "malformed" or theirs == "malformed":
            ok = ours == theirs
            both_malformed += ok
        else:
            ok = same(ours, theirs)
        if ok:
            agree += 1
        else:
            disagreements.append((path.relative_to(vault), ours, our_reason, theirs, their_reason))
    for path, ours, our_reason, theirs, their_reason in disagreements:
        print(f"--- {path}")
        print(f"    ours:   {our_reason or ours!r}")
        print(f"    PyYAML: {their_reason or theirs!r}")
    share = 100 * agree / blocks if blocks else 100.0
    print(f"{agree} of {blocks} frontmatter blocks read the same ({share:.2f}%), {len(disagreements)} differ")
    print(f"({both_malformed} of the {agree} are malformed for both parsers)")
    return 0 if share >= 99.5 else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 tests/compare_frontmatter.py /path/to/vault")
    sys.exit(main(Path(sys.argv[1])))
