"""A sweep of the edges of steps 4 to 10, site by site, for the kinds of bug the audits
planted (see test_edges.py): a comparison with a limit one off, a falsy value taken for an
absent one, a name split at the wrong separator or compared without its boundary, and the
edges of Obsidian's Markdown and properties. Every site that no other test held is held
here, in every distinct copy of its file; each test was seen to fail with its bug planted.
The list of sites, and which test holds each, is in the sweep's report (sweep-sites.md)."""
import json
import logging

import pytest

from helpers import distinct_copies, step_modules
from manifest import find_step
from test_edges import make_vault, modules

VAULT_STEPS = distinct_copies("vault.py", since=4)
MARKDOWN_STEPS = distinct_copies("markdown.py", since=5)


# ---- vault.py ------------------------------------------------------------------------

@pytest.mark.parametrize("step", VAULT_STEPS)
def test_a_path_of_exactly_the_longest_length_is_judged_and_one_longer_is_refused_unread(step):
    (vault_module,) = modules(step, "vault")
    longest = "a/" * (vault_module.MAX_PATH_CHARS // 2 - 1) + "bc"
    assert len(longest) == vault_module.MAX_PATH_CHARS
    assert vault_module.path_parts(longest)[-1] == "bc"
    with pytest.raises(vault_module.VaultError, match="longer than"):
        vault_module.path_parts(longest + "d")


@pytest.mark.parametrize("step", VAULT_STEPS)
def test_a_name_ending_in_md_without_the_dot_is_no_note_and_gets_its_md(step, tmp_path):
    """"Farmd" is not a note; "Farmd" asks for the note "Farmd.md", as a link would."""
    (vault_module,) = modules(step, "vault")
    root = make_vault(tmp_path, {"Farmd.md": "# Farm\n", "Plan.txtmd": "not a note\n", "Notes/Xmd": "nor this\n"})
    vault = vault_module.Vault(root)
    assert vault.list_notes() == ["Farmd.md"]
    assert vault.read_note("Farmd") == ("Farmd.md", "# Farm\n")
    for path in ("Plan.txtmd", "Notes/Xmd"):
        with pytest.raises(vault_module.VaultError, match="not a note"):
            vault.read_note(path)
