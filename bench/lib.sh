# What the bench scripts share, sourced after `set -euo pipefail` and a cd to the repository root:
#   use_build TARGET...   bin=build/release, built first; with BIN set, that build as it is
#   start_allotd ARG...   allotd on SQLite in a scratch dir, a fresh operator key, waits until it
#                         listens; sets dir, key and pids (stopped and removed on exit) and exports
#                         ALLOT_SERVER and ALLOT_KEY for the allot CLI
#   start_agents N ARG... N allot-agents (node-1 .. node-N) simulating 8 H100s each, joined with a
#                         fresh join token, with the ARGs added; their pids join pids. With
#                         OWN_ADDRESSES=1, node-i's workloads serve on 127.0.0.(i+1)
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

start_agents() {
  local count=$1 token i
  shift
  token=$($bin/src/cli/allot -o json join-tokens create bench | field token)
  for i in $(seq 1 "$count"); do
    $bin/src/agent/allot-agent --server "$ALLOT_SERVER" --join-token "$token" \
      --state-dir "$dir/agent-$i" --name "node-$i" --simulate 8xH100-80GB --log-level warn \
      ${OWN_ADDRESSES:+--workload-address 127.0.0.$((i + 1))} "$@" 2>"$dir/agent-$i.log" &
    pids+=($!)
  done
}

field() { sed -n "s/^ *\"$1\": \"\([^\"]*\)\".*/\1/p" | head -n 1; }
