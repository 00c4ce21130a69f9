# Everything bootstraps itself: a fresh machine with only python3 can run `make test`.
# `make` (or `make help`) lists the targets: every `## make TARGET: ...` line below.
SHELL := /bin/bash
STACK ?= v100
DEMO_STACK ?= local
DEMO_NAME ?= vllm-serving-demo
TOOLS := .tools
UV := $(shell command -v uv 2>/dev/null || echo $(TOOLS)/bin/uv)
SYNCED := .venv/.synced-from-uv.lock
.DEFAULT_GOAL := help

.PHONY: help test pytest typecheck lint plan check env clean bench demo

## make help: this list (the `## make ...` lines of the Makefile)
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

$(TOOLS)/bin/uv:
	@echo "make: first run - installing uv into $(TOOLS)/ (~10 s; skipped when uv is on the PATH)"
	python3 -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet uv

# The environment is synced when uv.lock or pyproject.toml changes, with a line saying so.
$(SYNCED): uv.lock pyproject.toml | $(UV)
	@echo "make: creating the project environment in .venv from uv.lock (first run ~15-60 s)"
	$(UV) sync --frozen --quiet
	@touch $@

## make env: the project environment in .venv (every target below makes it first)
env: $(SYNCED)

## make test: the unit and mock-engine tests, the type check and the linters (what CI runs)
test: pytest typecheck lint

## make pytest: the tests alone; make typecheck: mypy --strict alone
pytest: env
	@echo "make: pytest on every core (~1-3 min on two cores)"
	$(UV) run --frozen pytest -q -n auto

typecheck: env
	@echo "make: mypy --strict (~20 s)"
	$(UV) run --frozen mypy
	$(UV) run --frozen mypy -p tools.mutation -m tools.cli_reference

## make test-docker: the shipped stacks' containers on a real Docker engine, with a stand-in vLLM
##   image built locally (nothing pulled); skips with the reason when no engine is reachable
test-docker: env
	@echo "make: the Docker-engine suite (builds the stand-in image first, ~1 min)"
	$(UV) run --frozen pytest -q -m docker_engine tests/docker_engine

## make demo: the local stack's container with a stand-in vLLM image on your Docker engine, then
##   `vllm-stack smoke` against it: no Pulumi, GPU or download, under a minute (DEMO_STACK=, DEMO_NAME=)
demo: env
	$(UV) run --frozen python tools/demo.py --stack $(DEMO_STACK) --name $(DEMO_NAME)

## make cli-reference: write docs/cli-reference.md again from the parser (every verb's arguments and
##   help texts); tests/cli/test_cli_reference.py fails when it is out of date
.PHONY: cli-reference
cli-reference: env
	$(UV) run --frozen python -m tools.cli_reference

## make lint: ruff, and the import contracts (layers one way, no Pulumi in the core, no cycles)
lint: env
	@echo "make: ruff and lint-imports (~10 s)"
	$(UV) run --frozen ruff check .
	$(UV) run --frozen lint-imports

## make plan STACK=v100: what `pulumi up -s STACK` would deploy, offline
plan: env
	$(UV) run --frozen vllm-stack plan $(STACK)

## make check: the compatibility rules over every stack file
check: env
	$(UV) run --frozen vllm-stack check

## make clean: remove the tools, the environment and the caches
clean:
	rm -rf $(TOOLS) .venv .pytest_cache .mypy_cache

## make bench: start-up time of the CLI and of each backend's import path; check over 200 stacks
##   (`python benchmarks/startup.py --instructions`: the same paths counted in instructions, with valgrind)
bench: env
	@echo "make: benchmarks (~1 min)"
	$(UV) run --frozen python benchmarks/startup.py
	$(UV) run --frozen python benchmarks/check_many.py
	$(UV) run --frozen python benchmarks/hostile_stack.py

## make mutation PACKAGE=observability [SAMPLE=150] [SEED=1]: mutation testing (mutmut) of one package
##   of vllm_serving/ or components/ against its own tests only (tests/<package>/, tests/test_<package>*.py),
##   SAMPLE mutants drawn with SEED (default: all); prints the score and each survivor's diff, and
##   keeps the latest score per package in out/mutation.json (docs/testing.md). No PACKAGE: lists them.
##   AGAIN=1: run only the last recorded run's survivors (after tests were added for them).
.PHONY: mutation
PACKAGE ?=
SAMPLE ?=
SEED ?= 1
AGAIN ?=
mutation: env
	@echo "make: mutation testing (tens of minutes)"
	$(UV) run --frozen python -m tools.mutation.run $(PACKAGE) $(if $(SAMPLE),--sample $(SAMPLE)) --seed $(SEED) $(if $(AGAIN),--survivors-again) --max-children 2
