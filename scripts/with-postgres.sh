#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL server: a new cluster in a temporary directory,
# listening on a free loopback port. Exports ALLOT_TEST_POSTGRES_URL for the command, and stops
# and removes the server afterwards, whatever the command's outcome.
set -euo pipefail

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/initdb" ] || { echo "with-postgres: PostgreSQL is not installed (scripts/setup.sh)" >&2; exit 1; }

dir=$(mktemp -d /tmp/allot-pg-XXXXXX)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  # PostgreSQL refuses to run as root; Debian's package made the postgres user.
  chown postgres "$dir"
  as_pg=(runuser -u postgres --)
fi

cleanup() {
  "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" stop -m fast >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }

started=""
for attempt in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 40000))
  if "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null 2>&1; then
    started=yes
    break
  fi
done
[ -n "$started" ] || { echo "with-postgres: the server did not start" >&2; cat "$dir/server.log" >&2; exit 1; }

export ALLOT_TEST_POSTGRES_URL="postgresql://postgres@127.0.0.1:$port/postgres"
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
set +e
"$@"
rc=$?
set -e
exit $rc
