# Build an MCP server for an Obsidian vault, one step at a time.
# `make` lists the targets.

PYTHON ?= python3
PORT ?= 3000
# The servers run on a copy of the sample vault, made once in the ignored scratch
# folder: what a session writes (create_note, from step 8) never touches the
# repository's own notes. VAULT=~/notes points them at yours.
SAMPLE_COPY = steps/scratch/sample-vault
VAULT ?= $(SAMPLE_COPY)
MANIFEST = tomllib.load(open("steps/steps.toml", "rb"))["step"]
STEP_NUMBERS := $(shell $(PYTHON) -c 'import tomllib; print(*(s["number"] for s in $(MANIFEST)))')
VAULT_STEPS := $(shell $(PYTHON) -c 'import tomllib; print(*(s["number"] for s in $(MANIFEST) if s.get("vault")))')
# From step 3 on, a step has client.py, which talks to its server over stdio.
DEMO_NUMBERS := $(filter-out 1 2,$(STEP_NUMBERS))
# The folder of step N, e.g. $(call step_dir,1) is steps/01-raw-dispatcher.
step_dir = $(wildcard steps/$(shell printf '%02d' $(1))-*)
# Only the steps marked vault = true in steps.toml read a vault.
vault_flag = $(if $(filter $(1),$(VAULT_STEPS)),--vault $(VAULT))
# What a vault step needs first: the sample vault's copy, when that is the vault.
vault_copy = $(if $(filter $(1),$(VAULT_STEPS)),$(filter $(SAMPLE_COPY),$(VAULT)))
# The reader's scratch copy of step N (made by make try-N, ignored by git).
scratch_dir = steps/scratch/$(notdir $(call step_dir,$(1)))

.PHONY: help run test check interop bench eval clean guide guide-check $(addprefix step-,$(STEP_NUMBERS)) \
	$(addprefix check-,$(STEP_NUMBERS)) $(addprefix diff-,$(STEP_NUMBERS)) \
	$(addprefix demo-,$(DEMO_NUMBERS)) $(addprefix try-,$(STEP_NUMBERS)) $(addprefix reset-,$(STEP_NUMBERS))

help:
	@echo "make run          run the newest step's server (from step 4 on, on the sample vault)"
	@echo "make step-N       run step N's server on http://127.0.0.1:$(PORT)/mcp (PORT=, VAULT= to change)"
	@echo "make check-N      start step N, replay its wire scripts, compare with the transcripts"
	@echo "make check        the same for every step"
	@echo "make diff-N       what step N changed since step N-1 (ALL=1 shows transcripts too)"
	@echo "make demo-N       from step 3: a client that starts the server over stdio and prints the talk"
	@echo "make try-N        copy step N to steps/scratch/ (once) and run the copy: the place for exercises"
	@echo "make reset-N      throw the scratch copy of step N away"
	@echo "make exercise-N.K check exercise K of chapter N on your scratch copy, e.g. make exercise-1.2"
	@echo "make solve-N.K    apply exercise K's worked solution to your scratch copy of step N"
	@echo "make test         set up .venv with pytest (first time only) and run every test"
	@echo "make interop      the official MCP Python SDK's client against the newest step (own venv: .venv-interop)"
	@echo "make bench        tools/call: step 3 beside an SDK server (BENCH_SECONDS=); then step 7's index on 40,000 chunks"
	@echo "make eval         search quality: recall@5 and MRR@10 per mode and embedder (VAULT=, QUERIES= for any vault)"
	@echo "make clean        remove both virtual environments"
	@echo "make guide        rewrite the code and transcripts quoted in guide/ from the steps"
	@echo "make guide-check  fail if a chapter quotes code or a transcript that has changed"
	@echo "steps: $(STEP_NUMBERS)"

run: step-$(lastword $(STEP_NUMBERS))

$(SAMPLE_COPY):
	mkdir -p steps/scratch
	cp -R steps/sample-vault $@

.SECONDEXPANSION:
$(addprefix step-,$(STEP_NUMBERS)): step-%: $$(call vault_copy,$$*)
	$(PYTHON) $(call step_dir,$*)/server.py --port $(PORT) $(call vault_flag,$*)

$(addprefix check-,$(STEP_NUMBERS)): check-%:
	@$(PYTHON) steps/check.py $*

check:
	@$(PYTHON) steps/check.py

$(addprefix demo-,$(DEMO_NUMBERS)): demo-%:
	$(PYTHON) $(call step_dir,$*)/client.py

$(addprefix try-,$(STEP_NUMBERS)): try-%: $$(call vault_copy,$$*)
	@$(PYTHON) steps/scratch_copy.py $*
	$(PYTHON) $(call scratch_dir,$*)/server.py --port $(PORT) $(call vault_flag,$*)

$(addprefix reset-,$(STEP_NUMBERS)): reset-%:
	@$(PYTHON) steps/scratch_copy.py $* --reset

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

interop: .venv-interop/installed
	.venv-interop/bin/python tests/interop.py

# Benchmarks, not tests: step 3 and a minimal SDK server (tests/bench_sdk_server.py)
# under the same load (both run in .venv-interop; step 3 needs nothing from it), then
# step 7's index on 40,000 synthetic chunks, sketch search beside exact search.
bench: .venv-interop/installed
	.venv-interop/bin/python tests/bench.py
	$(PYTHON) tests/bench_index.py

# A measurement, not a test: labelled questions (tests/eval_queries.json, or QUERIES= about VAULT=) asked of
# the finished server's search in every mode, with every embedder that is available.
eval:
	$(PYTHON) tests/eval.py $(if $(QUERIES),--vault "$(VAULT)" --queries "$(QUERIES)")

clean:
	rm -rf .venv .venv-interop

guide:
	@$(PYTHON) guide/sync.py

guide-check:
	@$(PYTHON) guide/sync.py --check
