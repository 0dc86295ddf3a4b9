#!/usr/bin/env bash
# clang-format and clang-tidy over every C++ file; fails on any finding.
# Debian 12's clang 14 cannot parse libstdc++ 12's <expected>, so the tools are clang 19's. Boost
# 1.74 does not recognise clang's C++20 coroutines by itself, so clang-tidy is told they exist.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/debug}

mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h')
clang-format-19 --dry-run --Werror "${files[@]}"
echo "lint: clang-format clean (${#files[@]} files)"

mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep '\.cc$')
printf '%s\n' "${sources[@]}" |
  xargs -P "$(nproc)" -n 4 clang-tidy-19 -p "$build" --quiet \
    --extra-arg=-DBOOST_ASIO_HAS_CO_AWAIT=1 --extra-arg=-DBOOST_ASIO_HAS_STD_COROUTINE=1 2>&1 |
  grep -v -E '^[0-9]+ warnings? generated|^Suppressed|^Use -header-filter|^$' >"$build/clang-tidy.log" || true
if grep -q -E 'warning:|error:' "$build/clang-tidy.log"; then
  cat "$build/clang-tidy.log"
  echo "lint: clang-tidy found problems" >&2
  exit 1
fi
echo "lint: clang-tidy clean (${#sources[@]} files)"
