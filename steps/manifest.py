"""Read steps/steps.toml: the list of steps and what each one changes."""
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

STEPS_DIR = Path(__file__).resolve().parent
ROOT = STEPS_DIR.parent
SAMPLE_VAULT = STEPS_DIR / "sample-vault"
IGNORED_PARTS = {"__pycache__", ".pytest_cache"}


@dataclass
class Step:
    number: int
    folder: str
    title: str
    chapter: str
    changes: list[str]
    removes: list[str] = field(default_factory=list)
    vault: bool = False
    note: str = ""  # what the step did to the code, for make diff-N
    moves: list[dict] = field(default_factory=list)  # {from = "file:name", to = ["file:name", ...]}

    @property
    def path(self) -> Path:
        return STEPS_DIR / self.folder

    @property
    def server(self) -> Path:
        return self.path / "server.py"

    def files(self) -> set[str]:
        """Every file of the snapshot, as paths relative to its folder."""
        return {
            p.relative_to(self.path).as_posix()
            for p in self.path.rglob("*")
            if p.is_file() and not IGNORED_PARTS.intersection(p.parts) and p.suffix != ".pyc"
        }

    def wire_scripts(self) -> list[Path]:
        return sorted((self.path / "wire").glob("[0-9]*.sh"))


def load_steps(manifest: Path = STEPS_DIR / "steps.toml") -> list[Step]:
    with open(manifest, "rb") as f:
        return [Step(**entry) for entry in tomllib.load(f)["step"]]


def shared_data(manifest: Path = STEPS_DIR / "steps.toml") -> tuple[Path, list[str], list[str]]:
    """The folder of files the steps share ([data] in steps.toml), the data files in
    it, and the files that say where they come from (licence, origin, script)."""
    with open(manifest, "rb") as f:
        data = tomllib.load(f)["data"]
    return STEPS_DIR / data["folder"], [entry["name"] for entry in data["files"]], data["origin"]


def find_step(number: int) -> Step:
    for step in load_steps():
        if step.number == number:
            return step
    raise SystemExit(f"There is no step {number} in steps/steps.toml.")
