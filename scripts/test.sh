#!/usr/bin/env bash
# The README's test command: installs what is needed, builds, lints and runs every test, with a
# throwaway PostgreSQL server so that the PostgreSQL cases run too.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's start, so that a slow run shows where its time went.
step() { printf '== %s at %dm%02ds\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }

step setup
scripts/setup.sh
step build
# No debug information: a quarter less compiling, and test binaries a tenth the size to link.
cmake --preset debug -DCMAKE_CXX_FLAGS_DEBUG=-g0
cmake --build --preset debug
step web
scripts/web.sh
step lint
scripts/lint.sh build/debug
step fuzz
# Every libFuzzer target for 10 seconds over its seeds (build/fuzz, clang 19; docs/fuzzing.md).
scripts/fuzz.sh 10
step tests
# A fresh build has no record of how long each test takes, and ctest would start them in their
# order, the slowest perhaps last, with one core idle at the end. .ci/test-costs.txt, the slow
# tests' times from a run, lets it start those first.
costs=build/debug/Testing/Temporary/CTestCostData.txt
[ -f "$costs" ] || { mkdir -p "$(dirname "$costs")" && cp .ci/test-costs.txt "$costs"; }
ALLOT_REQUIRE_POSTGRES=1 scripts/with-postgres.sh ctest --preset debug -j "$(nproc)"
step done
