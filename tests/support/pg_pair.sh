#!/usr/bin/env bash
# A PostgreSQL primary and a streaming standby for the high-availability tests, in DIR:
#   pg_pair.sh DIR start PRIMARY_PORT STANDBY_PORT   makes both and starts them
#   pg_pair.sh DIR stop-primary                      stops the primary (fast: the standby has all)
#   pg_pair.sh DIR promote                           makes the standby the primary
#   pg_pair.sh DIR stop                              stops whatever runs and removes DIR
set -euo pipefail

dir=$1
step=$2
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then as_pg=(runuser -u postgres --); fi

start_server() {  # data directory, port
  "${as_pg[@]}" "$bin/pg_ctl" -D "$1" -l "$1.log" -w -t 30 \
    -o "-p $2 -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
}

case $step in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    "${as_pg[@]}" "$bin/initdb" -D "$dir/primary" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log"
    start_server "$dir/primary" "$3"
    "${as_pg[@]}" "$bin/pg_basebackup" -h 127.0.0.1 -p "$3" -U postgres -D "$dir/standby" -R -X stream
    start_server "$dir/standby" "$4"
    ;;
  stop-primary)
    "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/primary" -m fast -w stop >/dev/null
    ;;
  promote)
    "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/standby" -w promote >/dev/null
    ;;
  stop)
    for server in primary standby; do
      "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/$server" -m immediate stop >/dev/null 2>&1 || true
    done
    rm -rf "$dir"
    ;;
  *)
    echo "pg_pair.sh: unknown step $step" >&2
    exit 2
    ;;
esac
