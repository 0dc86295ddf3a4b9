#!/usr/bin/env bash
# The README's test command: installs what is needed, builds, lints and runs every test, with a
# throwaway PostgreSQL server so that the PostgreSQL cases run too.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset debug
cmake --build --preset debug
scripts/web.sh
scripts/lint.sh build/debug
ALLOT_REQUIRE_POSTGRES=1 scripts/with-postgres.sh ctest --preset debug -j "$(nproc)"
