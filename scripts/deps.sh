#!/usr/bin/env bash
# Install the Debian packages kcore's tests and lab need, when missing:
# keepalived, nftables and iproute2 for the VIP, runc and the CNI plugins for
# the containerd that scripts/build-k8s.sh builds, nix-bin to parse the NixOS modules, mkfs tools;
# gcc, busybox-static and ca-certificates for the lab's images
# (scripts/build-images.sh), docker-registry and openssl for its registry
# (scripts/lab-registry.sh); mmdebstrap for the Debian base of the upstream
# conformance images (scripts/build-images.sh --set conformance).
# Idempotent and quiet when everything is there. Needs root for apt-get; when
# not root it only reports what is missing (the tests that need it skip).
set -euo pipefail

# binary -> Debian package
declare -A want=(
  [keepalived]=keepalived
  [nix-instantiate]=nix-bin
  [ip]=iproute2
  [mkfs.ext4]=e2fsprogs
  [mkfs.xfs]=xfsprogs
  [losetup]=util-linux
  [nft]=nftables
  [curl]=curl
  [runc]=runc
  [iptables]=iptables
  [conntrack]=conntrack
  [gcc]=gcc
  [docker-registry]=docker-registry
  [openssl]=openssl
  [mmdebstrap]=mmdebstrap
)

missing=()
for bin in "${!want[@]}"; do
  if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ] && [ ! -x "/sbin/$bin" ]; then
    missing+=("${want[$bin]}")
  fi
done
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
# pause is linked statically against glibc; the CA bundle goes into CoreDNS's image.
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || missing+=(libc6-dev)
[ -f /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
# The busybox image needs the static build (Debian's busybox is dynamic).
dpkg-query -W -f '${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing+=(busybox-static)
# The conformance busybox image's /bin/sh.
[ -x /bin/bash-static ] || missing+=(bash-static)
[ ${#missing[@]} -eq 0 ] && exit 0

mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing Debian packages (not root, not installing): ${pkgs[*]}" >&2
  exit 0
fi
echo "deps: installing ${pkgs[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
