"""What the user allows the server to write: nothing (--read-only), or only inside
some folders (--write-folder, repeatable); by default any note of the vault.

A tool the policy forbids is not offered at all (tools/list leaves it out), so a
model never plans around a write it cannot make; check() refuses it once more at
the moment of writing, for every path a write touches. Folders compare as paths
do on macOS and Windows, ignoring case and Unicode spelling: "Journal" allows
"journal/Today.md". The vault's own rules still hold inside an allowed folder
(no hidden folder, no symbolic link out: Vault.locate and path_parts), and no write
touches a denied note (--exclude) or one of Obsidian's excluded files.
"""
import unicodedata
from dataclasses import dataclass

from vault import VaultError, path_parts, shown


@dataclass(frozen=True)
class WritePolicy:
    read_only: bool = False
    folders: tuple[str, ...] = ()  # vault folders writes are kept to; () for the whole vault

    @classmethod
    def make(cls, read_only: bool, folders) -> "WritePolicy":
        return cls(read_only, tuple("/".join(path_parts(folder)) for folder in folders or ()))

    def allows(self, path: str) -> bool:
        if self.read_only:
            return False
        return not self.folders or any(comparable(path).startswith(comparable(folder) + "/")
                                       for folder in self.folders)

    def check(self, vault, path: str) -> None:
        """Refuse a write to the vault path `path` the user has not allowed."""
        if self.read_only:
            raise VaultError("This server is read-only (--read-only): it changes no note")
        if not self.allows(path):
            folders = ", ".join(shown(folder) for folder in self.folders)
            raise VaultError(f"{shown(path)} is outside the folders this server may write in ({folders}); "
                             "nothing was written")
        if vault.denied(path):  # never on disk already, unless a write made it so
            raise VaultError(f"{shown(path)} is on the server's deny list (--exclude); nothing was written")
        if vault.excluded(path):
            raise VaultError(f"{shown(path)} is among Obsidian's excluded files (Settings > Files and links), "
                             "which this server leaves alone; nothing was written")


def comparable(path: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())
