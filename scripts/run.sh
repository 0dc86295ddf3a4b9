#!/usr/bin/env bash
# The README's run command: installs what is needed, builds, starts allotd on its embedded SQLite
# store in .allot-demo/, shows a short demo through the CLI, prints the URL and the operator key,
# and keeps allotd running until Ctrl-C. ALLOT_DEMO_ONLY=1 stops it after the demo instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ ! -x build/release/src/daemon/allotd ]; then
  echo "The first run installs packages and builds Allot: about 20 minutes on 2 cores. Later runs" \
    "start in seconds."
fi
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target allotd allot allot-agent
scripts/web.sh
# Instances run in containers; the demo's image is made here, as no public registry is used.
scripts/demo-image.sh localhost/allot-demo:1

demo=$root/.allot-demo
mkdir -p "$demo"
listen=${ALLOT_LISTEN:-127.0.0.1:8080}
# The first start makes the operator admin with this key; later starts on the same data keep it.
if [ ! -s "$demo/admin.key" ]; then
  (umask 077 && echo "allot_$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')" >"$demo/admin.key")
fi
admin_key=$(cat "$demo/admin.key")

rm -f "$demo/port"
# allotd and the agent run in sessions of their own, so that Ctrl-C reaches this script alone and
# it can stop the demo's work through allotd before stopping allotd itself.
ALLOT_ADMIN_KEY=$admin_key setsid build/release/src/daemon/allotd --listen "$listen" \
  --data-dir "$demo/data" --port-file "$demo/port" --autoscale-interval-ms 1000 --web-dir web/dist \
  --default-image localhost/allot-demo:1 >"$demo/allotd.out" 2>"$demo/allotd.log" &
pid=$!
agent_pid=""
url=""
# Ctrl-C (or the end of the demo) stops what the demo started: its running instances through the
# API, its agent, and allotd, which stops the agents its local pool started. Anything that still
# runs after that is named, with why.
stop_demo() {
  trap - EXIT INT TERM
  set +e  # Every step runs, whatever the one before it met.
  echo
  if [ -n "$url" ] && kill -0 "$pid" 2>/dev/null; then
    for id in $(ALLOT_KEY=$admin_key allot -o json ps --state running 2>/dev/null |
      sed -n 's/^ *"id": "\(ins_[^"]*\)".*/\1/p'); do
      echo "stopping instance $id"
      ALLOT_KEY=$admin_key allot stop "$id" >/dev/null 2>&1 || true
    done
    # Give the agents a heartbeat or two to carry the stops out.
    for _ in $(seq 1 50); do
      ALLOT_KEY=$admin_key allot -o json ps --state running 2>/dev/null | grep -q '"id": "ins_' ||
        break
      sleep 0.2
    done
  fi
  [ -n "$agent_pid" ] && kill -TERM "$agent_pid" 2>/dev/null
  kill -TERM "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
  [ -n "$agent_pid" ] && { wait "$agent_pid" 2>/dev/null || true; }
  sleep 0.5
  left=$(pgrep -f -- "$demo/" || true)
  if [ -n "$left" ]; then
    echo "Still running after the demo stopped (started by it, under $demo):"
    ps -o pid=,args= -p "$(echo $left | tr ' ' ',')" || true
    echo "These are agents or workload shims that did not stop in time; 'kill $(echo $left)' ends them."
  else
    echo "Stopped allotd and every agent and instance the demo started; the data stays in $demo."
  fi
}
trap stop_demo EXIT INT TERM
for _ in $(seq 1 300); do
  [ -s "$demo/port" ] && break
  kill -0 $pid 2>/dev/null || { cat "$demo/allotd.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$demo/port" ] || { echo "allotd did not start" >&2; exit 1; }
url="http://${listen%:*}:$(cat "$demo/port")"

allot() { ALLOT_SERVER=$url build/release/src/cli/allot "$@"; }
field() { sed -n "s/^ *\"$1\": \"\([^\"]*\)\".*/\1/p" | head -n 1; }
step() { printf '\n\033[1m$ allot %s\033[0m\n' "$*"; }
# Runs work as Ann, prints its id and follows its logs until it ends.
run_and_follow() {
  local id
  id=$(ALLOT_KEY=$ann_key allot -o json run "$@" | field id)
  echo "$id"
  step "logs -f $id"
  ALLOT_KEY=$ann_key allot logs -f "$id"
}

suffix=$(date +%H%M%S)
step "tenants create acme-$suffix"
# Printed from a copy: `tee /dev/stderr` would reopen a redirected log and truncate it.
created=$(ALLOT_KEY=$admin_key allot -o json tenants create "acme-$suffix")
echo "$created"
tenant=$(field id <<<"$created")
step "projects create vision --tenant $tenant"
ALLOT_KEY=$admin_key allot projects create vision --tenant "$tenant"
step "users create --name Ann --email ann@acme.example --role tenant-admin --tenant $tenant"
user=$(ALLOT_KEY=$admin_key allot -o json users create --name Ann --email ann@acme.example \
  --role tenant-admin --tenant "$tenant" | field id)
echo "$user"
step "keys create laptop --user $user"
ann_key=$(ALLOT_KEY=$admin_key allot -o json keys create laptop --user "$user" | field secret)
echo "${ann_key:0:12}... (shown once)"
step "whoami   (as Ann)"
ALLOT_KEY=$ann_key allot whoami
step "tenants list   (as Ann: her tenant only)"
ALLOT_KEY=$ann_key allot tenants list
step "tenants list   (as the operator: every tenant)"
ALLOT_KEY=$admin_key allot tenants list
step "tenants create sneaky   (as Ann: refused)"
ALLOT_KEY=$ann_key allot tenants create sneaky || echo "exit code $?"
step "audit --limit 5"
ALLOT_KEY=$admin_key allot audit --limit 5

step "join-tokens create demo   (then an agent joins with it, simulating 8 H100s; work runs in podman containers)"
token=$(ALLOT_KEY=$admin_key allot -o json join-tokens create demo | field token)
echo "${token:0:16}..."
setsid build/release/src/agent/allot-agent --server "$url" --join-token "$token" \
  --state-dir "$demo/agent" --name demo-node --simulate 8xH100-80GB 2>"$demo/agent.log" &
agent_pid=$!
for _ in $(seq 1 150); do
  ALLOT_KEY=$admin_key allot -o json nodes | grep -q '"state": "ready"' && break
  kill -0 "$agent_pid" 2>/dev/null || { echo "the agent stopped:" >&2; cat "$demo/agent.log" >&2; exit 1; }
  sleep 0.1
done
step "nodes"
ALLOT_KEY=$admin_key allot nodes
step "run --gpus 2 --gpu-type H100 -- true   (as Ann, before any price: refused, never run free)"
ALLOT_KEY=$ann_key allot run --gpus 2 --gpu-type H100 -- true || echo "exit code $?"
step "prices set --model H100-80GB --region default --gpu-hour 2.50   (and A100-80GB at 1.60)"
ALLOT_KEY=$admin_key allot prices set --model H100-80GB --region default --gpu-hour 2.50 >/dev/null
ALLOT_KEY=$admin_key allot prices set --model A100-80GB --region default --gpu-hour 1.60 >/dev/null
step "regions   (what each class is charged where; spot has no price, so spot work is refused)"
ALLOT_KEY=$admin_key allot regions
step "run --gpus 2 --gpu-type H100 -- sh -c '...'   (as Ann: a container that sees its 2 GPUs only)"
run_and_follow --gpus 2 --gpu-type H100 -- \
  sh -c 'echo hello from $CUDA_VISIBLE_DEVICES as uid $(id -u) on $(hostname); ls /dev | grep nvidia; sleep 1; echo bye'
step "ps --all   (as Ann: active work first, newest first, then what has ended)"
ALLOT_KEY=$ann_key allot ps --all


step "pools create a100-$suffix --model A100-80GB --provider local --min 0 --max 2 --gpus 4 ..."
ALLOT_KEY=$admin_key allot pools create "a100-$suffix" --model A100-80GB --provider local \
  --min 0 --max 2 --gpus 4 --idle-timeout 30 --boot-timeout 60
step "run --gpus 4 --gpu-type A100 ...   (as Ann: no A100 node yet, so the pool grows one)"
run_and_follow --gpus 4 --gpu-type A100 -- sh -c 'echo hello from a pool node; sleep 1; echo bye'
step "events   (operator: the autoscaler's decisions; the idle node goes after 30 s)"
ALLOT_KEY=$admin_key allot events | grep -E 'pool\.|kind' || true

cat <<MSG

Allot is running.
  URL:                $url  (the dashboard: sign in with the key below)
  operator admin key: $admin_key
Try:  ALLOT_SERVER=$url ALLOT_KEY=$admin_key build/release/src/cli/allot tenants list
MSG
if [ "${ALLOT_DEMO_ONLY:-}" = 1 ]; then exit 0; fi
echo "Logs: $demo/allotd.log. Ctrl-C stops allotd and the agents and instances the demo started."
wait $pid
