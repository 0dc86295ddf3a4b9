#!/usr/bin/env bash
# Services: requests/s and latency through a service's endpoint (/s/SERVICE/: the balancer, the
# hold and the node's tunnel) beside the same requests sent straight to its replica's port, on
# loopback; the cold start of a service at zero (the first request's wait, and where it went);
# and how fast the autoscaler answers load (from the load's start to a second replica asked for,
# and to it running and ready). The replica is an allotd answering /healthz: a fast server, so that
# what is measured is allotd; and the same through another tenant's caller key, whose use is
# counted and billed. The two process-runtime nodes' workloads serve on loopback addresses
# of their own (127.0.0.2 and .3), so that two replicas can serve the same port.
#   bench/service.sh                   (builds the release preset first)
#   THREADS=8 REQUESTS=40000 bench/service.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# BIN=build/debug measures an existing debug build instead (no release build is made).
source bench/lib.sh
use_build allotd allot allot-agent http_load
threads=${THREADS:-1}
requests=${REQUESTS:-20000}
now_ms() { date +%s%3N; }
service() { curl -sf -H "Authorization: Bearer $key" "$ALLOT_SERVER/v1/services/$svc"; }
json_of() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

start_allotd --process-runtime-tenants all
OWN_ADDRESSES=1 start_agents 2 --runtime process
$bin/src/cli/allot prices set --model H100-80GB --region default --gpu-hour 0 >/dev/null
sleep 1
tenant=$($bin/src/cli/allot -o json tenants create bench | field id)
project=$($bin/src/cli/allot -o json projects create bench --tenant "$tenant" | field id)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
svc=$($bin/src/cli/allot -o json services create bench --project "$project" --gpus 8 --port "$port" \
  --replicas 1:2 --target-concurrency 4 --scale-to-zero-after 10s --readiness /healthz -- \
  sh -c "exec '$PWD/$bin/src/daemon/allotd' --listen \$ALLOT_HOST:$port --data-dir \$(mktemp -d) --log-level warn" |
  field id)
for _ in $(seq 1 300); do
  [ "$(service | json_of 'd["ready_replicas"]')" = 1 ] && break
  sleep 0.1
done

# Steady state: one ready replica, requests one after another (or THREADS at once).
node=$(service | json_of 'd["replicas"][0]["node_id"]')
name=$(curl -sf -H "Authorization: Bearer $key" "$ALLOT_SERVER/v1/nodes/$node" | json_of 'd["name"]')
address=127.0.0.$((${name#node-} + 1))
direct=$($bin/bench/http_load --url "http://$address:$port" --threads "$threads" \
  --requests "$requests" --path /healthz) || { echo "direct: $direct" >&2; exit 1; }
proxied=$($bin/bench/http_load --url "$ALLOT_SERVER" --key "$key" --threads "$threads" \
  --requests "$requests" --path /s/$svc/healthz) || { echo "proxied: $proxied" >&2; exit 1; }

# Billed: the same requests by another tenant's caller key to the service shared with prices, so
# that each answer's status, headers and body pass the tap that counts its use.
$bin/src/cli/allot services update "$svc" --shared yes --price-per-request 0.000001 >/dev/null
caller_tenant=$($bin/src/cli/allot -o json tenants create caller | field id)
$bin/src/cli/allot tenants set "$caller_tenant" --billing prepaid >/dev/null
$bin/src/cli/allot topup "$caller_tenant" 1000000 >/dev/null
caller_user=$($bin/src/cli/allot -o json users create --name caller --email caller@bench \
  --tenant "$caller_tenant" | field id)
caller_key=$($bin/src/cli/allot -o json keys create bench --user "$caller_user" | field secret)
svc_key=$(ALLOT_KEY=$caller_key $bin/src/cli/allot -o json services keys create "$svc" bench |
  field secret)
billed=$($bin/bench/http_load --url "$ALLOT_SERVER" --key "$svc_key" --threads "$threads" \
  --requests "$requests" --path /s/$svc/healthz) || { echo "billed: $billed" >&2; exit 1; }

# Scale-up: 16 requests at a time against 4 per replica; when is a second replica asked for, when
# does it run, and when is it ready.
load_start=$(now_ms)
$bin/bench/http_load --url "$ALLOT_SERVER" --key "$key" --threads 16 --requests 400000 \
  --path /s/$svc/healthz >/dev/null 2>&1 &
load=$!
asked=0 running=0 ready=0
for _ in $(seq 1 600); do
  s=$(service)
  [ "$asked" = 0 ] && [ "$(echo "$s" | json_of 'd["desired"]')" = 2 ] && asked=$(now_ms)
  [ "$running" = 0 ] && [ "$asked" != 0 ] &&
    [ "$(echo "$s" | json_of 'len([r for r in d["replicas"] if r["state"] == "running"])')" = 2 ] &&
    running=$(now_ms)
  if [ "$(echo "$s" | json_of 'd["ready_replicas"]')" = 2 ]; then
    ready=$(now_ms)
    break
  fi
  sleep 0.05
done
kill "$load" 2>/dev/null || true
wait "$load" 2>/dev/null || true

# Cold start: quiet until no replica is left, then one request.
for _ in $(seq 1 1200); do
  [ "$(service | json_of 'len(d["replicas"])')" = 0 ] && break
  sleep 0.1
done
cold=$(curl -s -o /dev/null -w '%{time_total}' -H "Authorization: Bearer $key" \
  "$ALLOT_SERVER/s/$svc/healthz")
replica=$(service | json_of 'd["replicas"][0]["instance_id"]')
started=$(curl -sf -H "Authorization: Bearer $key" "$ALLOT_SERVER/v1/instances/$replica" |
  json_of '(d["started_at_ms"] - d["created_at_ms"]) / 1000')
echo "{\"threads\": $threads, \"direct\": $direct, \"proxied\": $proxied, \"billed\": $billed," \
  "\"scale_up\": {\"asked_s\": $(((asked - load_start)))e-3, \"running_s\": $(((running - load_start)))e-3, \"ready_s\": $(((ready - load_start)))e-3}," \
  "\"cold_start\": {\"first_answer_s\": $cold, \"placed_to_running_s\": $started}}"
