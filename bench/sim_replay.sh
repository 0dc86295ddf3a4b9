#!/usr/bin/env bash
# The FGD paper's fill-the-cluster experiment (shared/data/README.md) for every policy in the
# registry over the four openb traces and eight resamples of them (four with another mix of work,
# four CPU-bound): one JSON line per policy and trace, then the total time.
#   bench/sim_replay.sh                 (builds the release preset first; seeds 42-51)
#   SEEDS=142-151 bench/sim_replay.sh   (other seeds, to check that results carry over)
#   POLICIES="fgd allot" TRACES="default spec50" bench/sim_replay.sh
# The resamples are made by `allot sim resample` with fixed seeds, so every run replays the same
# pods: name, trace drawn from, seed, mix (in % of GPU pods, or every pod's CPU times a factor).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release --target allot >/dev/null
allot=build/release/src/cli/allot
data=${DATA:-../shared/data/openb}
seeds=${SEEDS:-42-51}
policies=${POLICIES:-$($allot sim policies)}
resamples=(
  "share60 default 1 --share 60"
  "multi10 default 2 --multi 10"
  "spec20 gpuspec33 4 --constrained 20"
  "spec50 gpuspec33 3 --constrained 50"
  "cpu125 default 5 --cpu-scale 1.25"
  "cpu150 default 5 --cpu-scale 1.5"
  "cpu200 default 5 --cpu-scale 2"
  "cpu250 default 5 --cpu-scale 2.5"
)
traces=${TRACES:-default gpushare40 multigpu30 gpuspec33 share60 multi10 spec20 spec50 cpu125 cpu150 cpu200 cpu250}
nodes="$data/node_list_gpu_node.csv"
made=$(mktemp -d)
trap 'rm -rf "$made"' EXIT
pods_of() {
  if [[ -f "$data/pod_list_$1.csv" ]]; then
    echo "$data/pod_list_$1.csv"
    return
  fi
  local line name from seed mix
  for line in "${resamples[@]}"; do
    read -r name from seed mix <<<"$line"
    if [[ $name == "$1" ]]; then
      # shellcheck disable=SC2086  # The mix is several flags.
      $allot sim resample --nodes "$nodes" --pods "$data/pod_list_$from.csv" --seed "$seed" $mix \
        >"$made/pod_list_$name.csv"
      echo "$made/pod_list_$name.csv"
      return
    fi
  done
  echo "unknown trace $1" >&2
  return 1
}
start=$(date +%s)
for trace in $traces; do
  pods=$(pods_of "$trace")
  for policy in $policies; do
    $allot sim replay --nodes "$nodes" --pods "$pods" --policy "$policy" --seeds "$seeds" -o json
  done
done
echo "total $(($(date +%s) - start)) s for seeds $seeds" >&2
