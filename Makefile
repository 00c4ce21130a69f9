# Everything bootstraps itself: a fresh machine with only python3 can run `make test`.
SHELL := /bin/bash
STACK ?= v100
TOOLS := .tools
UV := $(shell command -v uv 2>/dev/null || echo $(TOOLS)/bin/uv)

.PHONY: test pytest typecheck lint plan check env clean bench

$(TOOLS)/bin/uv:
	python3 -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet uv

env: $(UV)
	$(UV) sync --frozen --quiet

## make test: the unit and mock-engine tests, the type check and the linters (what CI runs)
test: pytest typecheck lint

pytest: env
	$(UV) run --frozen pytest -q -n auto

typecheck: env
	$(UV) run --frozen mypy
	$(UV) run --frozen mypy -p tools.mutation

## make test-docker: the shipped stacks' containers on a real Docker engine, with a stand-in vLLM
## image built locally (nothing pulled); skips with the reason when no engine is reachable
test-docker: env
	$(UV) run --frozen pytest -q -m docker_engine tests/docker_engine

## make lint: ruff, and the import contracts (layers one way, no Pulumi in the core, no cycles)
lint: env
	$(UV) run --frozen ruff check .
	$(UV) run --frozen lint-imports

## make plan STACK=v100: what `pulumi up -s STACK` would deploy, offline
plan: env
	$(UV) run --frozen vllm-stack plan $(STACK)

## make check: the compatibility rules over every stack file
check: env
	$(UV) run --frozen vllm-stack check

clean:
	rm -rf $(TOOLS) .venv .pytest_cache .mypy_cache

## make bench: start-up time of the CLI and of each backend's import path; check over 200 stacks
bench: env
	$(UV) run --frozen python benchmarks/startup.py
	$(UV) run --frozen python benchmarks/check_many.py
	$(UV) run --frozen python benchmarks/hostile_stack.py

## make mutation PACKAGE=observability [SAMPLE=150] [SEED=1]: mutation testing (mutmut) of one package
## of vllm_serving/ or components/ against its own tests only (tests/<package>/, tests/test_<package>*.py),
## SAMPLE mutants drawn with SEED (default: all); prints the score and each survivor's diff, and
## keeps the latest score per package in out/mutation.json (docs/testing.md). No PACKAGE: lists them.
.PHONY: mutation
PACKAGE ?=
SAMPLE ?=
SEED ?= 1
mutation: env
	$(UV) run --frozen python -m tools.mutation.run $(PACKAGE) $(if $(SAMPLE),--sample $(SAMPLE)) --seed $(SEED) --max-children 2
