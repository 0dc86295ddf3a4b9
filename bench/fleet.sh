#!/usr/bin/env bash
# allotd (SQLite) under a simulated fleet: NODES nodes (10,000 by default) of 8 H100s heartbeating
# every 2 s from one bench/fleet process, LAUNCH_RATE launches a second (20) of work that ends
# after 10 s, and READERS clients (1) reading pages of instances, for SECONDS_RUN (60) seconds.
# QUEUED instances of another tenant, over its quota, wait throughout (0 by default). One JSON
# line.
#   bench/fleet.sh            (builds the release preset first; BIN=build/release skips that)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
use_build allotd allot fleet http_load
start_allotd --process-runtime-tenants all --max-active-instances-per-tenant 1000000 \
  --http-max-connections 15000
token=$($bin/src/cli/allot -o json join-tokens create fleet | field token)
tenant=$($bin/src/cli/allot -o json tenants create fleet | field id)
project=$($bin/src/cli/allot -o json projects create fleet --tenant "$tenant" | field id)
$bin/src/cli/allot prices set --model H100-80GB --region default --gpu-hour 2.50 >/dev/null
# QUEUED instances (0 by default) that wait throughout: another tenant's, held back by its quota.
if [ "${QUEUED:-0}" -gt 0 ]; then
  backlog=$($bin/src/cli/allot -o json tenants create backlog | field id)
  waiting=$($bin/src/cli/allot -o json projects create backlog --tenant "$backlog" | field id)
  $bin/src/cli/allot quotas set --tenant "$backlog" --gpus 1 >/dev/null
  $bin/bench/http_load --url "$ALLOT_SERVER" --key "$key" --threads 16 --requests "$QUEUED" \
    --method POST --path /v1/instances \
    --body "{\"project_id\": \"$waiting\", \"gpus\": 1, \"command\": [\"true\"]}" >/dev/null
fi
$bin/bench/fleet --url "$ALLOT_SERVER" --key "$key" --join-token "$token" --project "$project" \
  --pid "${pids[0]}" --nodes "${NODES:-10000}" --seconds "${SECONDS_RUN:-60}" \
  --launch-rate "${LAUNCH_RATE:-20}" --threads "${THREADS:-8}" --readers "${READERS:-1}"
