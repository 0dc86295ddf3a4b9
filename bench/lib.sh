# What the bench scripts share, sourced after `set -euo pipefail` and a cd to the repository root:
#   use_build TARGET...   bin=build/release, built first; with BIN set, that build as it is
#   start_allotd ARG...   allotd on SQLite in a scratch dir, a fresh operator key, waits until it
#                         listens; sets dir, key and pids (stopped and removed on exit) and exports
#                         ALLOT_SERVER and ALLOT_KEY for the allot CLI
#   field NAME            the first "NAME": "value" of `allot -o json` output on stdin

use_build() {
  bin=${BIN:-build/release}
  if [ -z "${BIN:-}" ]; then
    cmake --preset release >/dev/null
    cmake --build --preset release --target "$@" >/dev/null
  fi
}

start_allotd() {
  dir=$(mktemp -d)
  pids=()
  trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
  key="allot_$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
  ALLOT_ADMIN_KEY=$key $bin/src/daemon/allotd --listen 127.0.0.1:0 --data-dir "$dir/data" \
    --port-file "$dir/port" --log-level warn "$@" >/dev/null 2>"$dir/allotd.log" &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
  export ALLOT_SERVER="http://127.0.0.1:$(cat "$dir/port")" ALLOT_KEY=$key
}

field() { sed -n "s/^ *\"$1\": \"\([^\"]*\)\".*/\1/p" | head -n 1; }
