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
# The fuzz targets compile only in the fuzz build (scripts/fuzz.sh): their commands come from there,
# every other file's from $build.
cmake --preset fuzz >/dev/null
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - "$build/compile_commands.json" build/fuzz/compile_commands.json "$db/compile_commands.json" <<'PY'
import json, os, sys
main, fuzz, out = sys.argv[1:]
entries = json.load(open(main))
fuzz_dir = os.path.join(os.getcwd(), "fuzz") + os.sep
entries += [e for e in json.load(open(fuzz)) if e["file"].startswith(fuzz_dir)]
json.dump(entries, open(out, "w"))
PY
tidy_args=(--extra-arg=-DBOOST_ASIO_HAS_CO_AWAIT=1 --extra-arg=-DBOOST_ASIO_HAS_STD_COROUTINE=1)

# clang-tidy's verdict on a file can only change when its key does (scripts/tidy_keys.py says what
# goes in it). .ci/tidy-clean holds the keys of the files last found clean, so only the files whose
# preprocessed text, compile command, clang-tidy or its configuration changed since are checked
# again. ALLOT_TIDY_ALL=1 checks every file.
cache=.ci/tidy-clean
mapfile -t keyed < <(printf '%s\n' "${sources[@]}" |
  python3 scripts/tidy_keys.py "$db" -DBOOST_ASIO_HAS_CO_AWAIT=1 -DBOOST_ASIO_HAS_STD_COROUTINE=1)
declare -A clean=()
if [ -f "$cache" ] && [ "${ALLOT_TIDY_ALL:-0}" != 1 ]; then
  while read -r key; do clean[$key]=1; done <"$cache"
fi
todo=()
for line in "${keyed[@]}"; do
  [ -n "${clean[${line%% *}]:-}" ] || todo+=("${line#* }")
done

: >"$build/clang-tidy.log"
if ((${#todo[@]})); then
  status=0
  printf '%s\n' "${todo[@]}" |
    xargs -P "$(nproc)" -n 4 clang-tidy-19 -p "$db" --quiet "${tidy_args[@]}" >"$build/clang-tidy.raw" 2>&1 ||
    status=$?
  grep -v -E '^[0-9]+ warnings? generated|^Suppressed|^Use -header-filter|^$' "$build/clang-tidy.raw" >"$build/clang-tidy.log" || true
  # A finding makes clang-tidy fail too; a failure with no finding is a crash, and is not clean.
  if ((status)) && ! grep -q -E 'warning:|error:' "$build/clang-tidy.log"; then
    cat "$build/clang-tidy.log"
    echo "lint: clang-tidy failed (status $status) without a finding" >&2
    exit 1
  fi
fi
if grep -q -E 'warning:|error:' "$build/clang-tidy.log"; then
  cat "$build/clang-tidy.log"
  echo "lint: clang-tidy found problems" >&2
  exit 1
fi
printf '%s\n' "${keyed[@]}" | cut -d' ' -f1 | grep -v '^unkeyed$' | sort -u >"$cache"
echo "lint: clang-tidy clean (${#sources[@]} files, ${#todo[@]} checked, the rest unchanged since found clean)"
