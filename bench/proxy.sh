#!/usr/bin/env bash
# Published ports: HTTP requests/s and latency through allotd's proxy (/i/INSTANCE/PORT/, over the
# node's tunnel) beside the same requests sent straight to the instance's port, on loopback.
# The instance is a second allotd answering /healthz: a fast server, so that what is measured is
# the proxy. One agent on the process runtime, so that the direct requests can reach the port.
#   bench/proxy.sh                   (builds the release preset first)
#   THREADS=8 REQUESTS=40000 bench/proxy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN=build/debug measures an existing debug build instead (no release build is made).
source bench/lib.sh
use_build allotd allot allot-agent http_load
threads=${THREADS:-1}
requests=${REQUESTS:-20000}

start_allotd --process-runtime-tenants all
start_agents 1 --runtime process
$bin/src/cli/allot prices set --model H100-80GB --region default --gpu-hour 0 >/dev/null
sleep 1
tenant=$($bin/src/cli/allot -o json tenants create bench | field id)
project=$($bin/src/cli/allot -o json projects create bench --tenant "$tenant" | field id)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
id=$($bin/src/cli/allot -o json run --project "$project" --gpus 1 --interactive --port "$port" -- \
  "$PWD/$bin/src/daemon/allotd" --listen "127.0.0.1:$port" --data-dir "$dir/backend" \
  --log-level warn | field id)
for _ in $(seq 1 100); do
  curl -sf -H "Authorization: Bearer $key" "$ALLOT_SERVER/i/$id/$port/healthz" >/dev/null && break
  sleep 0.2
done

direct=$($bin/bench/http_load --url "http://127.0.0.1:$port" --threads "$threads" \
  --requests "$requests" --path /healthz) || { echo "direct: $direct" >&2; exit 1; }
proxied=$($bin/bench/http_load --url "$ALLOT_SERVER" --key "$key" --threads "$threads" \
  --requests "$requests" --path "/i/$id/$port/healthz") || { echo "proxied: $proxied" >&2; exit 1; }
echo "{\"threads\": $threads, \"direct\": $direct, \"proxied\": $proxied}"
