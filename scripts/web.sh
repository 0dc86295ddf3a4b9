#!/usr/bin/env bash
# Builds the dashboard into web/dist: installs its npm packages (npm ci from the lockfile) and
# runs the type check (tsc) and the Vite build. Idempotent: reinstalls only when the lockfile
# changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/../web"

command -v npm >/dev/null || { echo "web: npm is missing (apt-get install -y npm)" >&2; exit 1; }
stamp=node_modules/.allot-lock.sha256
want=$(sha256sum package-lock.json 2>/dev/null | cut -d' ' -f1 || true)
if [ ! -f package-lock.json ]; then
  echo "web: npm install (no lockfile yet)"
  npm install --no-audit --no-fund --loglevel=error
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  echo "$want" >"$stamp"
elif [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "web: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
fi
npx --no-install tsc --noEmit
npx --no-install vite build --logLevel warn
echo "web: built $(pwd)/dist"
