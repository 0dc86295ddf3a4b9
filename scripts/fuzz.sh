#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, the fuzz preset: clang 19, only fuzz_all, in build/fuzz) and
# runs each for SECONDS (default 10) over a copy of its seed corpus (fuzz/corpus/TARGET) in a
# temporary directory, so that what a run adds to its corpus does not land in the tree. Fails on
# any finding (a crash, a sanitizer's report, an escaping exception, a broken property, a timeout
# or running out of memory); libFuzzer leaves the input that made it in build/fuzz/findings/.
# Prints each target's executions per second and coverage (docs/fuzzing.md). A run stops at its
# first finding; with ALLOT_FUZZ_KEEP_GOING=1 it goes on for its whole time (libFuzzer's fork mode)
# and fails at the end if it found anything.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 600 http_request
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(find fuzz -maxdepth 1 -name '*.cc' -printf '%f\n' | sed 's/\.cc$//' | sort)
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

findings=build/fuzz/findings
mkdir -p "$findings"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Stack traces with function names (the build has no debug information, so no lines).
symbolizer=$(command -v llvm-symbolizer-19 || command -v llvm-symbolizer || true)
export ASAN_SYMBOLIZER_PATH=$symbolizer
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:external_symbolizer_path=$symbolizer

mode=()
if [ "${ALLOT_FUZZ_KEEP_GOING:-0}" = 1 ]; then
  mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
failed=()
for target in "${targets[@]}"; do
  binary=build/fuzz/fuzz/fuzz_$target
  [ -x "$binary" ] || { echo "fuzz: no target $target" >&2; exit 2; }
  cp -r "fuzz/corpus/$target" "$work/$target"
  log=$work/$target.log
  status=0
  rm -f "$findings/$target-"*
  "$binary" "${mode[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/$target-" "$work/$target" >"$log" 2>&1 ||
    status=$?
  # Fork mode ends well past what it ignored: what it found is in the findings.
  if ((status == 0)) && compgen -G "$findings/$target-*" >/dev/null; then status=1; fi
  # The last status line: "#RUNS DONE cov: N ft: N corp: N/SIZE lim: N exec/s: N rss: NMb" (in
  # fork mode "#RUNS: cov: N ft: N corp: N exec/s: N oom/timeout/crash: N/N/N time: Ns ...").
  line=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  [ -n "$runs" ] || runs=$(grep -oP '^#\K[0-9]+' <<<"$line" || true)
  printf 'fuzz: %-15s %ss  runs %-9s cov %-6s ft %-6s exec/s %s\n' "$target" "$seconds" "${runs:-?}" \
    "$(grep -oP 'cov: \K[0-9]+' <<<"$line" || echo ?)" "$(grep -oP 'ft: \K[0-9]+' <<<"$line" || echo ?)" \
    "$(grep -oP 'exec/s: \K[0-9]+' <<<"$line" || echo ?)"
  if ((status != 0)); then
    grep -v -E '^#[0-9]+|^\s+NEW_FUNC' "$log" | tail -60
    echo "fuzz: $target found something (status $status): $(ls -t "$findings/$target-"* 2>/dev/null | head -1)" >&2
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, nothing found"
