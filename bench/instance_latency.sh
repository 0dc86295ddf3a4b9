#!/usr/bin/env bash
# Instance launch latency (POST /v1/instances to the workload running) and creates per second,
# on allotd (SQLite) with three agents simulating 8 H100s each, all on this machine.
#   bench/instance_latency.sh                     (builds the release preset first; processes)
#   RUNTIME=container bench/instance_latency.sh   (podman containers of an image already on the
#                                                  node: 100 instances at 2 per second, latency only)
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN=build/debug measures an existing debug build instead (no release build is made).
source bench/lib.sh
use_build allotd allot allot-agent instance_bench

runtime=${RUNTIME:-process}
image_args=()
if [ "$runtime" = container ]; then
  scripts/demo-image.sh localhost/allot-demo:1
  image_args=(--default-image localhost/allot-demo:1)
  : "${COUNT:=100}" "${RATE:=2}" "${THREADS:=0}"
fi
# The bench tenant is not the operator's: let it use process-runtime nodes.
start_allotd --process-runtime-tenants all "${image_args[@]}"
start_agents 3 --runtime "$runtime"
tenant=$($bin/src/cli/allot -o json tenants create bench | field id)
project=$($bin/src/cli/allot -o json projects create bench --tenant "$tenant" | field id)
# Work is placed only where a price covers it.
$bin/src/cli/allot prices set --model H100-80GB --region default --gpu-hour 2.50 >/dev/null
sleep 1
$bin/bench/instance_bench --url "$ALLOT_SERVER" --key "$key" --project "$project" \
  --count "${COUNT:-1000}" --threads "${THREADS:-16}" --rate "${RATE:-50}"
