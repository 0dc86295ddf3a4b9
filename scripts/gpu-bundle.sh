#!/usr/bin/env bash
# Builds allotd, allot-agent and allot here (Debian 12) and bundles them with the shared
# libraries they need beyond glibc into dist/gpu/, so that they run on a GPU host with another
# distribution (Ubuntu 24.04 seen) that has neither Boost nor libpq. NVML is not bundled: the
# agent loads the host driver's libnvidia-ml.so.1 at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cmake --preset release >/dev/null
cmake --build --preset release --target allotd allot allot-agent >/dev/null
out=dist/gpu
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for program in src/daemon/allotd src/cli/allot src/agent/allot-agent; do
  cp "build/release/$program" "$out/bin/"
  strip "$out/bin/$(basename "$program")"
  ldd "build/release/$program" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;  # The host's glibc.
      *) cp -nL "$lib" "$out/lib/" ;;
    esac
  done
done
cp scripts/gpu_check.py "$out/"
du -sh "$out"
