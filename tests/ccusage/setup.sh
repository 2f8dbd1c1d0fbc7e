#!/usr/bin/env bash
# Installs ccusage 20.0.24 (npm; the independent client of issue 22's bill comparison) into
# tests/ccusage/node_modules (git-ignored) from tests/ccusage/package-lock.json (integrity-checked).
# Needs node >= 20 and npm; reaches only the npm registry. Usage: bash tests/ccusage/setup.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup-ccusage: node and npm are required (node >= 20)" >&2
  exit 1
fi
cd "$here"
# `npm ci` refuses a lock without every platform's optional binary; `npm install --no-save` installs the
# locked versions and checks their integrity without rewriting the lock
npm install --no-save --no-audit --no-fund --loglevel=error
version="$(./node_modules/.bin/ccusage --version 2>/dev/null | tr -d '[:space:]' || true)"
case "$version" in
  *20.0.24*) echo "setup-ccusage: ccusage $version installed in $here/node_modules" ;;
  *) echo "setup-ccusage: smoke check failed (ccusage --version printed '$version')" >&2; exit 1 ;;
esac
