#!/usr/bin/env bash
# Lints docs/openapi.json (or the file given): Redocly CLI's rules (redocly.yaml), then lint.mjs's
# checks (the official OpenAPI 3.1 JSON Schema, strict request bodies). Installs the pinned npm
# packages first when node_modules is missing or older than package-lock.json. Exits non-zero on
# any problem; 77 (ctest's SKIP_RETURN_CODE) when Node.js or npm is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spec=$(realpath "${1:-$here/../../docs/openapi.json}")
cd "$here"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "lint.sh: node and npm are needed; skipped" >&2
  exit 77
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  touch node_modules
fi

# No telemetry, no update check: the lint must not depend on anything but the registry install.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_COLOR=1
# Redocly prints a banner about Node.js 20's end of life on stderr; keep only its findings.
status=0
output=$(node_modules/.bin/redocly lint --config redocly.yaml --format=stylish "$spec" 2>&1) || status=$?
grep -v -e '[║╔╚]' -e '^ *$' <<<"$output" || true
[ "$status" -eq 0 ] || { echo "lint.sh: redocly lint failed ($status)" >&2; exit 1; }
node lint.mjs "$spec"
