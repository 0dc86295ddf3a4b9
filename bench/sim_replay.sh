#!/usr/bin/env bash
# The FGD paper's fill-the-cluster experiment (shared/data/README.md) for every policy in the
# registry over the four openb traces: one JSON line per policy and trace, then the total time.
#   bench/sim_replay.sh                 (builds the release preset first; seeds 42-51)
#   SEEDS=42-43 bench/sim_replay.sh     (shorter: seeds 42-51 took 641 s, 2-core machine)
#   POLICIES="fgd best-fit" TRACES=default bench/sim_replay.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release --target allot >/dev/null
allot=build/release/src/cli/allot
data=${DATA:-../shared/data/openb}
seeds=${SEEDS:-42-51}
policies=${POLICIES:-$($allot sim policies)}
traces=${TRACES:-default gpushare40 multigpu30 gpuspec33}
start=$(date +%s)
for trace in $traces; do
  for policy in $policies; do
    $allot sim replay --nodes "$data/node_list_gpu_node.csv" --pods "$data/pod_list_$trace.csv" \
      --policy "$policy" --seeds "$seeds" -o json
  done
done
echo "total $(($(date +%s) - start)) s for seeds $seeds" >&2
