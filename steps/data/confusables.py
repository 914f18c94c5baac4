"""Make confusables.txt, the table lookalikes.py reads, from Unicode's confusables.txt.

    python3 steps/data/confusables.py path/to/unicode/confusables.txt

Unicode's file (UTS #39, "Unicode Security Mechanisms") maps each character that can
be mistaken for another to its prototype, a string of one or more characters: lines
of "source ; prototype ; MA # comment", code points in hexadecimal. The table written
here keeps the mappings alone, one a line, "source<TAB>prototype" in the same hex, and
a header naming the version it came from; the comments, names and glyphs are left out.
"""
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAPPING = re.compile(r"^([0-9A-F]{4,6}) ;\t([0-9A-F ]+?) ;\tMA\t")


def main(source: Path) -> None:
    text = source.read_text(encoding="utf-8-sig")
    version = re.search(r"^# Version: (\S+)", text, re.MULTILINE).group(1)
    rows = [match.groups() for match in map(MAPPING.match, text.splitlines()) if match]
    lines = [f"# Unicode confusables (UTS #39), version {version}: source<TAB>prototype, code points in hex.",
             "# Made by confusables.py from Unicode's confusables.txt; see README.md and LICENSE-UNICODE."]
    lines += [f"{source}\t{prototype}" for source, prototype in rows]
    (HERE / "confusables.txt").write_text("\n".join(lines) + "\n", encoding="ascii")
    print(f"confusables.txt: {len(rows)} mappings, Unicode {version}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
