#!/usr/bin/env bash
# Authenticated reads per second: allotd (SQLite) with 1,000 instances (queued: no node can take
# them) and NODES simulated agents (20 by default), then bench/http_load from 32 clients on
#   GET /v1/instances/{id}      each request a different one of the 1,000
#   GET /v1/instances?limit=100 a page of about 130 KB
#   GET /v1/nodes               every node
# and GET /healthz (no state at all), the HTTP layer's own ceiling. One JSON line each, with the
# CPU allotd used meanwhile.
#   bench/api_reads.sh            (builds the release preset first; BIN=build/release skips that)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
use_build allotd allot allot-agent http_load
start_allotd
start_agents "${NODES:-20}"
tenant=$($bin/src/cli/allot -o json tenants create bench | field id)
project=$($bin/src/cli/allot -o json projects create bench --tenant "$tenant" | field id)
# They ask for A100s, which no node has: all 1,000 stay queued, unchanged while read.
$bin/src/cli/allot prices set --model A100-80GB --region default --gpu-hour 1.50 >/dev/null
$bin/bench/http_load --url "$ALLOT_SERVER" --key "$key" --threads 16 --requests 1000 \
  --method POST --path /v1/instances \
  --body "{\"project_id\": \"$project\", \"gpus\": 1, \"gpu_models\": [\"A100-80GB\"], \"command\": [\"true\"]}" >/dev/null
after=""
for _ in $(seq 1 10); do
  page=$(curl -s -H "Authorization: Bearer $key" \
    "$ALLOT_SERVER/v1/instances?limit=100${after:+&after=$after}")
  grep -o '"id":"ins_[0-9a-f]*"' <<<"$page" | cut -d'"' -f4 | sed 's|^|/v1/instances/|' \
    >>"$dir/paths"
  after=$(grep -o '"next_after":"[^"]*"' <<<"$page" | cut -d'"' -f4 || true)
  [ -n "$after" ] || break
done
sleep 2  # Every agent has joined and sent its first heartbeat.
# Each result line gains allotd's CPU over the run, in cores (1.0 = one core busy throughout).
ticks() { awk '{print $14 + $15}' "/proc/${pids[0]}/stat"; }
load() {
  local before start result cores
  before=$(ticks)
  start=$(date +%s%N)
  result=$($bin/bench/http_load --url "$ALLOT_SERVER" --key "$key" --threads 32 "$@")
  cores=$(awk -v t="$(($(ticks) - before))" -v hz="$(getconf CLK_TCK)" \
    -v ns="$(($(date +%s%N) - start))" 'BEGIN { printf "%.2f", t / hz / (ns / 1e9) }')
  echo "${result%\}}, \"allotd_cores\": $cores}"
}
load --requests 200000 --paths "$dir/paths"
load --requests 20000 --path "/v1/instances?limit=100"
load --requests 50000 --path /v1/nodes
load --requests 200000 --path /healthz
