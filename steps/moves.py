"""Where each definition of a step came from: the moves steps.toml lists, a class's
methods moving along with it, and definitions that stay in their file under their name.

make diff-N uses it to compare a function with what it was, even in another file.
"""
from dataclasses import dataclass, field

from definitions import Piece, pieces
from manifest import Step

Ref = tuple[str, str]  # (file, definition name), written "file:name" in steps.toml


@dataclass
class Plan:
    """Which definition of the step before each definition of this step came from."""

    old: dict[str, list[Piece]]  # the step before's Python files that this step touches
    new: dict[str, list[Piece]]  # this step's changed Python files
    source: dict[Ref, Ref] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def is_move(self, target: Ref) -> bool:
        return target in self.source and self.source[target] != target

    def moved_in_or_out(self, file: str) -> bool:
        return any(file in (target[0], origin[0]) for target, origin in self.source.items() if target != origin)

    def gone(self) -> list[Ref]:
        """Definitions of the step before that nothing came from."""
        used = set(self.source.values())
        return [(f, p.name) for f, found in self.old.items() for p in found if (f, p.name) not in used]


def plan(step: Step, before: Step | None) -> Plan:
    code = [name for name in step.changes if name.endswith(".py")]
    old_files = set(code) | {n for n in step.removes if n.endswith(".py")}
    old_files |= {ref(move["from"])[0] for move in step.moves}
    old_files = sorted(n for n in old_files if before and (before.path / n).is_file())
    result = Plan(
        old={n: pieces((before.path / n).read_text()) for n in old_files},
        new={n: pieces((step.path / n).read_text()) for n in code},
    )
    old_names = {(f, p.name) for f, found in result.old.items() for p in found}
    new_names = {(f, p.name) for f, found in result.new.items() for p in found}
    moved_on_their_own = {ref(move["from"]) for move in step.moves}
    for move in step.moves:
        origin = ref(move["from"])
        if origin not in old_names:
            result.problems.append(f"steps.toml: step {step.number} moves {move['from']}, which the step before lacks")
        for target in map(ref, move["to"]):
            if target not in new_names:
                result.problems.append(f"steps.toml: step {step.number} moves to {':'.join(target)}, which it lacks")
            result.source[target] = origin
            # A class takes its methods along by name, unless a method moves on its own.
            for file, name in old_names:
                member = name.removeprefix(origin[1] + ".")
                if file == origin[0] and member != name and (file, name) not in moved_on_their_own:
                    if (target[0], f"{target[1]}.{member}") in new_names:
                        result.source.setdefault((target[0], f"{target[1]}.{member}"), (file, name))
    for target in new_names - set(result.source):
        if target in old_names:  # the same name in the same file
            result.source[target] = target
    return result


def ref(text: str) -> Ref:
    file, _, name = text.partition(":")
    return file, name
