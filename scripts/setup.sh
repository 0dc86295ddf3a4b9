#!/usr/bin/env bash
# Installs what Allot needs to build, test and run, from Debian 12's own packages. Idempotent:
# when everything is there it only checks.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config make lld openssl
  libboost-dev libboost-system-dev nlohmann-json3-dev libsqlite3-dev libpq-dev libcli11-dev
  libspdlog-dev libfmt-dev libtomlplusplus-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  postgresql
  clang-format-19 clang-tidy-19 libclang-rt-19-dev
  curl prometheus chromium poppler-utils
  # The agents' container runtime: rootful podman with runc (crun fails on cgroup v1 hybrid
  # hosts), CNI bridge networks walled in by iptables; busybox makes the demo's and tests' image.
  podman runc containernetworking-plugins iptables busybox-static
  # The init of every container (podman --init), and what makes local volumes file systems of
  # their own size (mkfs.ext4, loop mounts).
  catatonit e2fsprogs mount
  # A private registry with a password, for the tests of registry credentials.
  docker-registry apache2-utils skopeo
  # Replicas whose clocks disagree, for the tests of high availability.
  faketime
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
