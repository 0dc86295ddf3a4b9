#!/usr/bin/env bash
# A service's cold start on the container runtime: a service at zero whose replica is a podman
# container of an image already on the node (busybox httpd, from scripts/demo-image.sh) gets one
# request; how long until it is answered, and how much of that was the container's start (the
# replica's placed-to-running: podman creating and starting it). ROUNDS rounds (default 5), each
# after the service went back to zero.
#   bench/service_cold.sh            (builds the release preset first)
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN=build/debug measures an existing debug build instead (no release build is made).
source bench/lib.sh
use_build allotd allot allot-agent
rounds=${ROUNDS:-5}
scripts/demo-image.sh localhost/allot-demo:1 >/dev/null
service() { curl -sf -H "Authorization: Bearer $key" "$ALLOT_SERVER/v1/services/$svc"; }
json_of() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

start_allotd --default-image localhost/allot-demo:1
start_agents 1 --runtime container
$bin/src/cli/allot prices set --model H100-80GB --region default --gpu-hour 0 >/dev/null
sleep 1
tenant=$($bin/src/cli/allot -o json tenants create bench | field id)
project=$($bin/src/cli/allot -o json projects create bench --tenant "$tenant" | field id)
port=8080
svc=$($bin/src/cli/allot -o json services create cold --project "$project" --gpus 1 \
  --port "$port" --replicas 0:1 --scale-to-zero-after 10s --readiness /etc/passwd -- \
  httpd -f -p "$port" -h / | field id)
results=()
for _ in $(seq 1 "$rounds"); do
  for _ in $(seq 1 600); do
    [ "$(service | json_of 'len(d["replicas"])')" = 0 ] && break
    sleep 0.1
  done
  answer=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' -H "Authorization: Bearer $key" \
    "$ALLOT_SERVER/s/$svc/etc/passwd")
  replica=$(service | json_of 'd["replicas"][0]["instance_id"]')
  started=$(curl -sf -H "Authorization: Bearer $key" "$ALLOT_SERVER/v1/instances/$replica" |
    json_of '(d["started_at_ms"] - d["created_at_ms"]) / 1000')
  results+=("{\"status\": ${answer%% *}, \"first_answer_s\": ${answer#* }, \"placed_to_running_s\": $started}")
done
(IFS=,; echo "{\"runtime\": \"container\", \"rounds\": [${results[*]}]}")
