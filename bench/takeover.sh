#!/usr/bin/env bash
# Takeover between two replicas of allotd on one PostgreSQL (docs/ha.md), with the default lease:
#  1. KILLS times (20): SIGKILL the leader and time until the other replica accepts a write (a
#     POST /v1/tenants tried every 50 ms); the killed one is started again and follows.
#  2. NODES nodes (1,000, joined by bench/fleet) and INSTANCES instances (100,000) in the state,
#     then one more kill: the new leader's state load (its log's load_s) and that takeover's time.
# Prints JSON lines.
#   bench/takeover.sh            (builds the release preset first; BIN=build/release skips that)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
if [ -z "${ALLOT_TEST_POSTGRES_URL:-}" ]; then
  use_build allotd allot fleet http_load
  BIN=$bin exec scripts/with-postgres.sh bash "$0"
fi
bin=$BIN
pg=$ALLOT_TEST_POSTGRES_URL
dir=$(mktemp -d)
key="allot_$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
read -r -a ports <<<"$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')"
pids=(0 0)
trap 'kill -KILL "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

start_replica() {  # index
  ALLOT_ADMIN_KEY=$key $bin/src/daemon/allotd --listen "127.0.0.1:${ports[$1]}" \
    --advertise-url "http://127.0.0.1:${ports[$1]}" --store postgres --postgres-url "$pg" \
    --data-dir "$dir/r$1" --log-level info --max-active-instances-per-tenant 1000000 \
    >>"$dir/r$1.out" 2>>"$dir/r$1.log" &
  pids[$1]=$!
}
readiness() { curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:${ports[$1]}/readyz" || true; }
wait_for() {  # index status
  for _ in $(seq 1 600); do [ "$(readiness "$1")" = "$2" ] && return 0; sleep 0.1; done
  echo "replica $1 never answered $2" >&2
  exit 1
}
api() {  # method path body
  curl -s --max-time 10 -X "$1" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d "$3" "http://127.0.0.1:${ports[$leader]}$2"
}
now_ms() { date +%s%3N; }
jfield() { python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }
# Kills the leader, sets `took` to the milliseconds until the other accepts a write, starts the
# killed one again and waits until it follows.
kill_leader() {
  local other=$((1 - leader)) start n=0
  start=$(now_ms)
  kill -KILL "${pids[$leader]}"
  wait "${pids[$leader]}" 2>/dev/null || true
  until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X POST \
    -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d "{\"name\": \"k$start-$n\"}" "http://127.0.0.1:${ports[$other]}/v1/tenants")" = 201 ]; do
    n=$((n + 1))
    sleep 0.05
  done
  took=$(($(now_ms) - start))
  start_replica "$leader"
  wait_for "$leader" 503
  leader=$other
}

start_replica 0
wait_for 0 200
leader=0
mkdir -p "$dir/r1"
cp "$dir/r0/secrets.key" "$dir/r1/secrets.key"
start_replica 1
wait_for 1 503

times=()
for _ in $(seq 1 "${KILLS:-20}"); do
  kill_leader
  times+=("$took")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
count=${#times[@]}
pick() { echo "$sorted" | sed -n "$(((count * $1 + 99) / 100))p"; }
echo "{\"bench\": \"takeover\", \"kills\": $count, \"lease_ms\": 10000, \"p50_ms\": $(pick 50)," \
  "\"p99_ms\": $(pick 99), \"min_ms\": $(echo "$sorted" | head -n 1)," \
  "\"all_ms\": [$(IFS=,; echo "${times[*]}")]}"

# A large state: nodes from a simulated fleet, then queued instances.
token=$(api POST /v1/join-tokens '{"name": "fleet"}' | jfield token)
tenant=$(api POST /v1/tenants '{"name": "fleet"}' | jfield id)
project=$(api POST /v1/projects "{\"name\": \"fleet\", \"tenant_id\": \"$tenant\"}" | jfield id)
api PUT /v1/prices '{"gpu_model": "H100-80GB", "region": "default", "price_class": "on-demand", "gpu_hour": "2.5"}' >/dev/null
$bin/bench/fleet --url "http://127.0.0.1:${ports[$leader]}" --key "$key" --join-token "$token" \
  --project "$project" --pid "${pids[$leader]}" --nodes "${NODES:-1000}" --seconds 5 \
  --launch-rate 0 --readers 0 >/dev/null
$bin/bench/http_load --url "http://127.0.0.1:${ports[$leader]}" --key "$key" --threads 16 \
  --requests "${INSTANCES:-100000}" --method POST --path /v1/instances \
  --body "{\"project_id\": \"$project\", \"gpus\": 1, \"command\": [\"true\"]}" >/dev/null
next=$((1 - leader))
kill_leader
load=$(grep 'msg="store open"' "$dir/r$next.log" | tail -n 1)
objects=$(echo "$load" | sed -n 's/.*objects=\([0-9]*\).*/\1/p')
load_s=$(echo "$load" | sed -n 's/.*load_s=\([0-9.]*\).*/\1/p')
echo "{\"bench\": \"takeover_loaded\", \"nodes\": ${NODES:-1000}, \"instances\": ${INSTANCES:-100000}," \
  "\"objects\": $objects, \"load_s\": $load_s, \"takeover_ms\": $took}"
