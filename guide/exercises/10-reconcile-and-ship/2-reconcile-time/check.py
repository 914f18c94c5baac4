"""The reconcile line says how long it took: "... (0 touched but equal) in 0.02 s"."""
import re

from probe import expect, ok, run_copy

# Build an index of a small vault, then reconcile it as the next start does; print the line.
RECONCILE = """
import pathlib, sys, tempfile
from hash_embedder import HashEmbedder
from reconcile import reconcile
from vault import Vault
from vault_index import VaultIndex
root = pathlib.Path(tempfile.mkdtemp())
(root / "vault").mkdir()
(root / "vault" / "Rye.md").write_text("# Rye\\n\\nA dense, sour loaf.\\n")
(root / "vault" / "Kimchi.md").write_text("# Kimchi\\n\\nSalt the cabbage.\\n")
vault_index = VaultIndex(Vault(root / "vault"), HashEmbedder(), root / "index")
vault_index.rebuild()
print(reconcile(VaultIndex(Vault(root / "vault"), HashEmbedder(), root / "index")))
"""
LINE = re.compile(r"reconciled: 0 new, 0 changed, 0 removed, 2 unchanged \(\d+ touched but equal\) in (\d+(\.\d+)?) s")


def check(server):
    done = run_copy(server.folder, ["-c", RECONCILE])
    expect(done.returncode == 0, f"reconciling a small vault failed: {done.stderr.strip()[-600:]}")
    line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    expect(line.startswith("reconciled: 0 new, 0 changed, 0 removed, 2 unchanged"),
           f"the report should count as before; it says {line!r}")
    ok("the report counts as before")
    timed = LINE.fullmatch(line)
    expect(timed is not None, f"the report says {line!r}; add ' in 0.02 s' at its end: time reconcile() "
                              "(reconcile.py) and give Report the seconds it took")
    expect(float(timed.group(1)) < 60, f"reconciling two notes took {timed.group(1)} s? Measure in seconds")
    ok("the report says how long it took")
