#!/usr/bin/env python3
"""On a real GPU host: allotd and allot-agent (NVML) from dist/gpu, checked against nvidia-smi,
then a ~30 s CUDA workload run as an instance, with its energy from the NVML energy counter.

    python3 dist/gpu/gpu_check.py            # from the repository root, after scripts/gpu-bundle.sh
"""
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, LD_LIBRARY_PATH=os.path.join(HERE, "lib"))
WORKLOAD = """
import time, torch
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16)
end = time.time() + 30
n = 0
while time.time() < end:
    c = a @ b
    n += 1
torch.cuda.synchronize()
print(f"matmuls={n} tflops={n * 2 * 8192**3 / 30 / 1e12:.0f}", flush=True)
"""


def call(url, key, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method)
    request.add_header("Authorization", "Bearer " + key)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def wait(predicate, seconds=60):
    end = time.time() + seconds
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise SystemExit("timed out")


def main():
    work = tempfile.mkdtemp(prefix="allot-gpu-")
    key = "allot_" + secrets.token_hex(20)
    port_file = os.path.join(work, "port")
    procs = [subprocess.Popen(
        [os.path.join(HERE, "bin", "allotd"), "--listen", "127.0.0.1:0", "--data-dir",
         os.path.join(work, "data"), "--port-file", port_file, "--heartbeat-interval-ms", "1000",
         "--log-level", "warn"],
        env=dict(ENV, ALLOT_ADMIN_KEY=key), stdout=subprocess.DEVNULL)]
    try:
        wait(lambda: os.path.exists(port_file))
        url = "http://127.0.0.1:" + open(port_file).read().strip()
        token = call(url, key, "POST", "/v1/join-tokens", {"name": "gpu-check"})["token"]
        procs.append(subprocess.Popen(
            [os.path.join(HERE, "bin", "allot-agent"), "--server", url, "--join-token", token,
             "--state-dir", os.path.join(work, "agent"), "--name", "gpu-host"], env=ENV))
        node = wait(lambda: [n for n in call(url, key, "GET", "/v1/nodes")["items"]
                             if n["state"] == "ready"])[0]
        print(f"node {node['name']} backend={node['backend']} gpus={len(node['gpus'])}")
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,name,uuid,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, check=True).stdout.strip().splitlines()
        ok = node["backend"] == "nvml" and len(smi) == len(node["gpus"])
        for line, gpu in zip(smi, node["gpus"]):
            index, name, uuid, mib = [part.strip() for part in line.split(",")]
            same = (int(index) == gpu["index"] and name == gpu["name"] and uuid == gpu["uuid"]
                    and int(mib) == gpu["memory_bytes"] // (1 << 20))
            ok = ok and same
            print(f"gpu {index}: nvidia-smi {name} {uuid} {mib} MiB | NVML {gpu['name']} "
                  f"{gpu['uuid']} {gpu['memory_bytes'] // (1 << 20)} MiB model={gpu['model']} "
                  f"{'MATCH' if same else 'MISMATCH'}")
        tenant = call(url, key, "POST", "/v1/tenants", {"name": "gpu-check"})["id"]
        project = call(url, key, "POST", "/v1/projects", {"name": "p", "tenant_id": tenant})["id"]
        instance = call(url, key, "POST", "/v1/instances", {
            "project_id": project, "gpus": 1, "command": ["python3", "-c", WORKLOAD]})
        iid = instance["id"]
        running = wait(lambda: (lambda i: i if i["state"] in ("running", "failed", "succeeded") else None)(
            call(url, key, "GET", "/v1/instances/" + iid)))
        gpu_index = running["gpu_indices"][0]

        def energy():
            n = call(url, key, "GET", "/v1/nodes/" + node["id"])
            return n["gpus"][gpu_index]["energy_mj"], n["gpus"][gpu_index]["power_mw"]

        start_mj, _ = energy()
        peak_mw = 0
        while True:
            current = call(url, key, "GET", "/v1/instances/" + iid)
            mj, mw = energy()
            peak_mw = max(peak_mw, mw)
            if current["state"] not in ("running", "starting", "scheduled"):
                break
            time.sleep(1)
        time.sleep(2.5)  # One more telemetry tick after the end.
        end_mj, _ = energy()
        seconds = (current["ended_at_ms"] - current["started_at_ms"]) / 1000
        logs = call(url, key, "GET", f"/v1/instances/{iid}/logs")["data"].strip()
        print(f"instance {iid} state={current['state']} exit={current['exit_code']} "
              f"ran={seconds:.1f}s gpu={running['gpu_uuids'][0]} output: {logs}")
        delta = end_mj - start_mj
        print(f"energy: {delta} mJ = {delta / 3.6e9:.6f} kWh over the run, mean "
              f"{delta / max(seconds, 1e-9) / 1000:.0f} W, peak sampled {peak_mw / 1000:.0f} W")
        ok = ok and current["state"] == "succeeded" and delta > 0
        print("RESULT", "PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
