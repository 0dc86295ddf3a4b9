#!/usr/bin/env bash
# Creates per second as the queue grows, through the API: allotd (SQLite) with no node, so every
# instance waits; WINDOWS windows of 10,000 POST /v1/instances from 16 clients, one JSON line
# each with the queue's length at its start and what allotd spent on the window: its CPU (ms) and
# the bytes it wrote to disk. Then allotd's CPU while it holds them all, idle.
#   bench/queue_growth.sh            (builds the release preset first; WINDOWS=10 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
use_build allotd allot http_load
start_allotd --max-active-instances-per-tenant 1000000
pid=${pids[0]}
tenant=$($bin/src/cli/allot -o json tenants create bench | field id)
project=$($bin/src/cli/allot -o json projects create bench --tenant "$tenant" | field id)
$bin/src/cli/allot prices set --model H100-80GB --region default --gpu-hour 2.50 >/dev/null
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
written() { sed -n 's/^write_bytes: //p' "/proc/$pid/io"; }
for w in $(seq 0 $((${WINDOWS:-10} - 1))); do
  cpu_before=$(ticks) written_before=$(written)
  result=$($bin/bench/http_load --url "$ALLOT_SERVER" --key "$key" --threads 16 --requests 10000 \
    --method POST --path /v1/instances \
    --body "{\"project_id\": \"$project\", \"gpus\": 1, \"command\": [\"true\"]}")
  cpu_ms=$(( ($(ticks) - cpu_before) * 1000 / $(getconf CLK_TCK) ))
  echo "{\"queued_at_start\": $((w * 10000)), \"allotd_cpu_ms\": $cpu_ms," \
    "\"allotd_written_bytes\": $(( $(written) - written_before )), \"load\": $result}"
done
before=$(ticks)
sleep 10
echo "{\"idle_cpu_pct\": $(( ($(ticks) - before) * 100 / $(getconf CLK_TCK) / 10 ))}"
