#!/usr/bin/env bash
# Every measurement in docs/benchmarks.md, one after another, at the current commit: the release
# build (and the debug CLI for the simulations the document runs on it), then each bench script
# or program as the document names it. Each one's output goes to OUT/<name>.txt (OUT defaults to
# bench-results/<commit>), with the command, the commit and the machine at its top.
#   bench/all.sh                       everything (16 minutes on 2 cores once built, Slurm too)
#   ONLY="api_reads fleet" bench/all.sh  some of them
#   SLURM=1 bench/all.sh               the Slurm peer as well (needs root; shared/peers/slurm)
set -euo pipefail
cd "$(dirname "$0")/.."
commit=$(git rev-parse --short HEAD)
out=${OUT:-bench-results/$commit}
mkdir -p "$out"
cmake --preset release >/dev/null
cmake --build --preset release --target allotd allot allot-agent http_load fleet instance_bench \
  queue_bench sched_scale rating_bench ledger_bench >/dev/null
cmake --preset debug >/dev/null
cmake --build --preset debug --target allot >/dev/null
export BIN=build/release
data=../shared/data

# name, then the command that measures it.
runs=(
  "api_writes|bash bench/api_writes.sh"
  "instance_latency|bash bench/instance_latency.sh"
  "queue_bench|build/release/bench/queue_bench --total 100000 --window 10000 --tenants 10"
  "queue_growth|bash bench/queue_growth.sh"
  "api_reads|bash bench/api_reads.sh"
  "fleet|SECONDS_RUN=30 bash bench/fleet.sh"
  "fleet_no_reader|SECONDS_RUN=30 READERS=0 bash bench/fleet.sh"
  "proxy|bash bench/proxy.sh"
  "proxy_8|THREADS=8 REQUESTS=40000 bash bench/proxy.sh"
  "sim_replay|bash bench/sim_replay.sh"
  "sched_scale|build/release/bench/sched_scale --nodes-csv $data/spot2026/node_info.csv --pods $data/openb/pod_list_default.csv"
  "rating|build/release/bench/rating_bench"
  "ledger_sqlite|build/release/bench/ledger_bench"
  "ledger_postgres|scripts/with-postgres.sh bash -c 'build/release/bench/ledger_bench --postgres \"\$ALLOT_TEST_POSTGRES_URL\"'"
  "forecast|for t in default gpushare40 gpuspec33; do build/debug/src/cli/allot sim forecast --trace $data/openb/pod_list_\$t.csv; done"
  "pools_week|build/debug/src/cli/allot sim run --compare-forecast examples/pools-week.json"
)
if [ "${SLURM:-0}" = 1 ]; then
  runs+=("slurm|N=1000 REST_N=1000 LAT_SAMPLES=10 bash ../shared/peers/slurm/run.sh")
fi

for run in "${runs[@]}"; do
  name=${run%%|*}
  command=${run#*|}
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
  {
    echo "# $command"
    echo "# commit $commit, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
    bash -c "$command" 2>&1
  } >"$out/$name.txt" || echo "$name failed: see $out/$name.txt" >&2
  echo "$name: $out/$name.txt"
done
