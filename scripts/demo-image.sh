#!/usr/bin/env bash
# Makes the small image that the demo and the benchmarks run in, without any registry: Debian's
# static busybox with every applet linked, imported into the node's podman as
# localhost/allot-demo:1 (or the name given). Idempotent.
set -euo pipefail
image=${1:-localhost/allot-demo:1}
if podman image exists "$image"; then exit 0; fi
[ -x /bin/busybox ] || { echo "demo-image: /bin/busybox is missing (apt-get install busybox-static)" >&2; exit 1; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/etc" "$root/tmp"
chmod 1777 "$root/tmp"
cp /bin/busybox "$root/bin/busybox"
for applet in $(/bin/busybox --list); do
  [ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
done
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'nobody:x:65534:65534:nobody:/tmp:/bin/sh' >>"$root/etc/passwd"
if ! out=$(tar -C "$root" -c . | podman import --change 'CMD ["/bin/sh"]' - "$image" 2>&1); then
  echo "$out" >&2
  exit 1
fi
echo "demo-image: made $image"
