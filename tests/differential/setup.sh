#!/usr/bin/env bash
# Installs the pinned pi 0.84.1 npm package for the differential suite (GitHub issue 9) into
# tests/differential/driver/node_modules, and pi 0.30.2 (legacy session format, issue 12) into
# tests/differential/legacy_driver/node_modules (both git-ignored), from their package-lock.json
# files (integrity-checked).
# Needs node >= 20 and npm; reaches only the npm registry. Usage: bash tests/differential/setup.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup-differential: node and npm are required (node >= 20)" >&2
  exit 1
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "setup-differential: node >= 20 required, found $(node --version)" >&2
  exit 1
fi
cd "$here/driver"
npm ci --no-audit --no-fund --loglevel=error
# Smoke check: the driver loads pi's tool modules and answers one request.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
printf '%s\n' "{\"id\":0,\"tool\":\"write\",\"cwd\":\"$scratch\",\"args\":{\"path\":\"x\",\"content\":\"ok\"}}" \
  | PI_OFFLINE=1 PI_CODING_AGENT_DIR="$scratch/agent" node driver.mjs \
  | grep -q 'Successfully wrote 2 bytes to x' \
  || { echo "setup-differential: driver smoke check failed" >&2; exit 1; }
echo "setup-differential: pi $(node -p 'require("./node_modules/@earendil-works/pi-coding-agent/package.json").version') installed in $here/driver/node_modules"
# pi 0.30.2, the last release writing the legacy session format (no `version`), for the legacy importer (issue 12).
cd "$here/legacy_driver"
npm ci --no-audit --no-fund --loglevel=error
node -e 'import("@mariozechner/pi-coding-agent").then(m => { if (typeof m.buildSessionContext !== "function") process.exit(1) })' \
  || { echo "setup-differential: legacy driver smoke check failed" >&2; exit 1; }
echo "setup-differential: pi $(node -p 'require("./node_modules/@mariozechner/pi-coding-agent/package.json").version') installed in $here/legacy_driver/node_modules"
