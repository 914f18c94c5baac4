"""A Python file cut into its definitions, so that make diff-N can compare a
function with the function it came from, even in another file.

Each top-level statement is one piece, named for what it defines: a function or
class by its name, an assignment by its target, the module docstring as
"(docstring)", the imports together as "(imports)", anything else by its first
line in parentheses. A class is cut once more: its header (decorators, the class
line and its docstring) is named for the class, and each statement of its body is
a piece of its own, named Class.method. Comments belong to the piece they stand
in or above; blank lines and region markers at a piece's edges are left out.
"""
import ast
import re
from dataclasses import dataclass

MARKER = re.compile(r"^\s*# (region|endregion) \S+\s*$")


@dataclass
class Piece:
    name: str
    start: int  # the line number of its first line, from 1
    lines: list[str]
    is_definition: bool = False  # a function, class or method, not a value or an import


def pieces(text: str) -> list[Piece]:
    lines = text.splitlines()
    body = ast.parse(text).body
    found, end = split(body, lines, 0, "", 0)
    rest = cut("(end of file)", lines, end, len(lines))
    return merge_imports(found + ([rest] if rest.lines else []))


def split(statements: list[ast.stmt], lines: list[str], begin: int, prefix: str, indent_after: int):
    """Cut statements into pieces from line index begin; return them and where they end.
    indent_after is the indentation of whatever follows the last statement."""
    found = []
    for i, node in enumerate(statements):
        following = statements[i + 1].col_offset if i + 1 < len(statements) else indent_after
        end = absorb_trailing_comments(lines, node.end_lineno, following)
        if isinstance(node, ast.ClassDef):
            found += class_pieces(node, lines, begin, end)
        else:
            is_docstring = i == 0 and not prefix and is_string(node)
            piece = cut("(docstring)" if is_docstring else name_of(node, lines, prefix), lines, begin, end)
            piece.is_definition = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            found.append(piece)
        begin = end
    return found, begin


def class_pieces(node: ast.ClassDef, lines: list[str], begin: int, end: int) -> list[Piece]:
    body = node.body
    members = body[1:] if is_string(body[0]) and len(body) > 1 else body
    header_end = members[0].lineno - 1  # decorators, the class line, the docstring
    found, _ = split(members, lines, header_end, node.name + ".", node.col_offset)
    last = found[-1]
    found[-1] = cut(last.name, lines, last.start - 1, end)  # with the comments trailing the class
    found[-1].is_definition = last.is_definition
    header = cut(node.name, lines, begin, header_end)
    header.is_definition = True
    return [header] + found


def absorb_trailing_comments(lines: list[str], end: int, indent_after: int) -> int:
    """A comment after a statement, indented deeper than what follows, is inside it."""
    index = end
    while index < len(lines):
        line = lines[index]
        indent = len(line) - len(line.lstrip())
        if line.strip() and not (line.lstrip().startswith("#") and indent > indent_after and not MARKER.match(line)):
            break
        index += 1
        if line.strip():
            end = index
    return end


def is_string(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def name_of(node: ast.stmt, lines: list[str], prefix: str) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return prefix + node.name
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "(imports)"
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    if isinstance(targets[0], ast.Name):
        return prefix + targets[0].id  # `a = b = c` is named for a
    return f"({lines[node.lineno - 1].strip()})"


def cut(name: str, lines: list[str], begin: int, end: int) -> Piece:
    """lines[begin:end] as a piece, without blank lines and region markers at its edges."""
    while begin < end and (not lines[begin].strip() or MARKER.match(lines[begin])):
        begin += 1
    while end > begin and (not lines[end - 1].strip() or MARKER.match(lines[end - 1])):
        end -= 1
    return Piece(name, begin + 1, lines[begin:end])


def merge_imports(found: list[Piece]) -> list[Piece]:
    """Import statements that follow each other are one piece."""
    merged = []
    for piece in found:
        if merged and piece.name == merged[-1].name == "(imports)":
            last = merged[-1]
            last.lines = last.lines + [""] * (piece.start - last.start - len(last.lines)) + piece.lines
        else:
            merged.append(piece)
    return merged
