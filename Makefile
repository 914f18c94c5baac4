# Build an MCP server for an Obsidian vault, one step at a time.
# `make` lists the targets.

PYTHON ?= python3
PORT ?= 3000
VAULT ?= steps/sample-vault
STEP_NUMBERS := $(shell $(PYTHON) -c 'import tomllib; print(*(s["number"] for s in tomllib.load(open("steps/steps.toml", "rb"))["step"]))')
# The folder of step N, e.g. $(call step_dir,1) is steps/01-raw-dispatcher.
step_dir = $(wildcard steps/$(shell printf '%02d' $(1))-*)
# Steps 1 to 3 speak the protocol only; from step 4 on the server reads a vault.
vault_flag = $(if $(filter 1 2 3,$(1)),,--vault $(VAULT))

.PHONY: help run test check guide guide-check $(addprefix step-,$(STEP_NUMBERS)) \
	$(addprefix check-,$(STEP_NUMBERS)) $(addprefix diff-,$(STEP_NUMBERS))

help:
	@echo "make run          run the newest step's server on the sample vault"
	@echo "make step-N       run step N's server on http://127.0.0.1:$(PORT)/mcp (PORT=, VAULT= to change)"
	@echo "make check-N      start step N, replay its wire scripts, compare with the transcripts"
	@echo "make check        the same for every step"
	@echo "make diff-N       what step N changed since step N-1"
	@echo "make test         set up .venv with pytest (first time only) and run every test"
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

$(addprefix diff-,$(STEP_NUMBERS)): diff-%:
	@$(PYTHON) steps/diff.py $*

.venv/bin/pytest: pyproject.toml
	$(PYTHON) -m venv .venv
	.venv/bin/python -m pip install --quiet --disable-pip-version-check \
		$$($(PYTHON) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"])')
	touch $@

test: .venv/bin/pytest
	.venv/bin/pytest

guide:
	@$(PYTHON) guide/sync.py

guide-check:
	@$(PYTHON) guide/sync.py --check
