#!/usr/bin/env bash
# Durable API writes per second: POST /v1/tenants against allotd on SQLite, then on PostgreSQL,
# at 1 and 32 concurrent clients. Each 201 has been committed (group commit) before it is sent.
#   bench/api_writes.sh            (builds the release preset first)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release --target allotd http_load >/dev/null
bin=build/release

run_one() {  # store-args... ; prints one JSON line per concurrency
  local dir key pid port
  dir=$(mktemp -d)
  key="allot_$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
  ALLOT_ADMIN_KEY=$key $bin/src/daemon/allotd --listen 127.0.0.1:0 --data-dir "$dir" \
    --port-file "$dir/port" --log-level warn "$@" >/dev/null 2>"$dir/log" &
  pid=$!
  for _ in $(seq 1 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
  port=$(cat "$dir/port")
  for threads in 1 32; do
    $bin/bench/http_load --url "http://127.0.0.1:$port" --key "$key" --threads $threads \
      --requests 4000 --method POST --path /v1/tenants --body "{\"name\": \"t$threads-{n}\"}"
  done
  kill -TERM $pid; wait $pid
  rm -rf "$dir"
}

echo "== sqlite"
run_one --store sqlite
echo "== postgres"
scripts/with-postgres.sh bash -c "$(declare -f run_one); bin=$bin; run_one --store postgres --postgres-url \"\$ALLOT_TEST_POSTGRES_URL\""
