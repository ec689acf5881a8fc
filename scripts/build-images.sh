#!/usr/bin/env bash
# Build the container images the lab runs, from the Go module proxy and
# Debian, into a cache directory, once per version: the lab cannot pull
# images, so every one its pods name is made here.
#
# manifests/images.go pins every image reference (the one place; kcore's
# render reads the same constants). For each, a static binary is built into
# DIR/bin/<name> with a .<name>.stamp naming what it was built from, then
# tests/images/build (kcore-images, a module of its own) writes
# DIR/<name>.oci.tar: an OCI image archive, linux/amd64, tagged with exactly
# the pinned reference, holding the binary and a minimal root filesystem.
#
#   pause                   gcc -static of Kubernetes' build/pause/linux/pause.c
#                           (k8s.io/kubernetes as tests/k8sbins/kubernetes-$PAUSE_K8S pins it)
#   coredns                 github.com/coredns/coredns at the tag, pinned by
#                           tests/images/coredns-<tag>/
#   local-path-provisioner  github.com/rancher/local-path-provisioner at the tag,
#                           pinned by tests/images/local-path-provisioner-<tag>/
#   busybox                 Debian's busybox-static, whose version must be the tag
#   echo                    tests/images/echo, the lab's test workload
#
# --set conformance builds instead the images the upstream conformance tests
# pull (make conformance), pinned by tests/conformance/images.go with the
# references e2e.test --list-images names, into DIR/conformance:
#
#   agnhost, agnhost-prev   k8s.io/kubernetes/test/images/agnhost (as
#                           tests/k8sbins/kubernetes-e2e-$E2E_K8S pins it) on the
#                           Debian root filesystem below; agnhost:2.55 holds the
#                           same build (the Pods test only switches images)
#   busybox                 Debian's busybox-static, applets in /bin, with
#                           Debian's bash-static as /bin/sh (busybox 1.35's ash
#                           drops environment variables whose names are not
#                           shell identifiers; upstream's 1.37 passes them on)
#   glibc-dns-testing       the Debian root filesystem (dig, glibc's resolver)
#   nginx                   the Debian root filesystem (nginx-light)
#   pause                   gcc -static of pause.c, as for the lab
#
# The Debian root filesystem is made once with mmdebstrap (bookworm, minbase,
# from the machine's apt sources) into DIR/conformance/bin/debian.rootfs.tar.
#
# --set cilium builds the images Cilium's chart runs, pinned by
# tests/cilium/images.go, into DIR/cilium, from the release
# scripts/build-cilium.sh builds (run first; it returns at once when its
# stamp matches):
#
#   cilium                  the agent's commands, CNI plugin, scripts and bpf/
#                           sources on a Debian root filesystem with what
#                           upstream's cilium-runtime holds for the agent and
#                           clang-19/llvm-19 (DIR/cilium/bin/cilium.rootfs.tar)
#   operator-generic        cilium-operator-generic and the CA bundle
#
# A binary whose stamp matches and which reports the expected version is not
# rebuilt; the archives are rewritten only when a binary, the tool or
# the images file changed.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/build-images.sh [options]

  --out DIR   cache of images (default ${KCORE_CACHE:-$HOME/.cache/kcore}/images,
              and its conformance/ with --set conformance)
  --set SET   lab (default: manifests/images.go), conformance
              (tests/conformance/images.go, the images e2e.test pulls) or
              cilium (tests/cilium/images.go, the images Cilium's chart runs)
  --force     rebuild every binary and archive
  -h, --help  this text
EOF
}

# Long compiles must not starve whatever else runs on the machine.
if [ "$(nice)" -lt 19 ]; then
  exec nice -n 19 "$0" "$@"
fi

# The Kubernetes release whose build/pause/linux/pause.c the pause image is
# compiled from (its module is pinned and downloaded by scripts/build-k8s.sh).
PAUSE_K8S=v1.37.2
# The Kubernetes release whose test/images/agnhost the conformance set's
# agnhost is built from: the release e2e.test is built from.
E2E_K8S=v1.37.2
# What the conformance set's Debian root filesystem holds.
DEBIAN_SUITE=bookworm
DEBIAN_PACKAGES=bind9-dnsutils,curl,netcat-openbsd,iproute2,socat,nginx-light
# What the Cilium agent image's Debian root filesystem holds: upstream's
# runtime packages for the agent and the LLVM release its datapath compiles
# with (18.1 or later; Debian 12's default clang is 14).
CILIUM_PACKAGES=iproute2,iptables,ipset,kmod,ca-certificates,clang-19,llvm-19

out=""
set=lab
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --set) set=${2:?--set needs a value}; shift 2 ;;
    --force) force=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "build-images: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
case "$set" in
  lab)
    images_go="$root/manifests/images.go"
    out=${out:-${KCORE_CACHE:-$HOME/.cache/kcore}/images}
    ;;
  conformance)
    images_go="$root/tests/conformance/images.go"
    out=${out:-${KCORE_CACHE:-$HOME/.cache/kcore}/images/conformance}
    ;;
  cilium)
    images_go="$root/tests/cilium/images.go"
    out=${out:-${KCORE_CACHE:-$HOME/.cache/kcore}/images/cilium}
    ;;
  *) echo "build-images: --set must be lab, conformance or cilium, got $set" >&2; exit 2 ;;
esac
export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0

start=$SECONDS
log() { printf '[images] %s\n' "$*" >&2; }
die() { echo "build-images: $*" >&2; exit 1; }
elapsed() { local s=$(( SECONDS - $1 )); printf '%dm%02ds' $(( s / 60 )) $(( s % 60 )); }
sha() { sha256sum "$@" | cut -d' ' -f1; }

mkdir -p "$out/bin"
exec 9>"$out/.lock"
if ! flock -n 9; then
  log "waiting for another build-images.sh using $out"
  flock 9
fi

tool="$out/bin/kcore-images"
log "kcore-images … building tests/images/build"
(cd "$root/tests/images/build" && go build -trimpath -ldflags "-s -w" -o "$tool.tmp" .)
mv -f "$tool.tmp" "$tool"

declare -A ref=()
names=()
while read -r n r; do
  ref[$n]=$r
  names+=("$n")
done < <("$tool" refs -set "$set" -images "$images_go")
[ ${#names[@]} -gt 0 ] || die "kcore-images listed no images in $images_go"

tag() { echo "${ref[$1]##*:}"; }

# binary NAME: whether NAME's image holds a binary built here (the
# conformance set's glibc-dns-testing and nginx are the Debian root alone).
binary() {
  case "$set:$1" in
    conformance:glibc-dns-testing | conformance:nginx) return 1 ;;
  esac
}

e2e_module() {
  local mod="$root/tests/k8sbins/kubernetes-e2e-$E2E_K8S"
  [ -f "$mod/go.mod" ] || die "no pinned module ${mod#"$root"/} for agnhost"
  echo "$mod"
}

# agnhost_version prints test/images/agnhost/VERSION of the pinned release.
agnhost_version() {
  local dir
  dir=$(cd "$(e2e_module)" && go mod download -json k8s.io/kubernetes | awk -F'"' '$2 == "Dir" { print $4 }')
  tr -d '[:space:]' <"$dir/test/images/agnhost/VERSION"
}

# expected NAME prints the line the binary must print when asked its version.
expected() {
  local t
  t=$(tag "$1")
  case "$set:$1" in
    *:pause) echo "pause.c v$t" ;;
    conformance:agnhost | conformance:agnhost-prev) echo "app version $(agnhost_version)" ;;  # cobra names it after its Use, app
    conformance:busybox) echo "BusyBox v$(busybox_version)" ;;
    cilium:cilium) echo "cilium-agent ${t#v} " ;;
    cilium:operator-generic) echo "Cilium-Operator ${t#v} " ;;
    lab:*) expected_lab "$1" ;;
    *) die "no recipe for image $1 (${ref[$1]})" ;;
  esac
}

expected_lab() {
  local t
  t=$(tag "$1")
  case "$1" in
    coredns) echo "CoreDNS-${t#v}" ;;
    local-path-provisioner) echo "version $t" ;;  # urfave/cli names the app after argv[0]
    busybox) echo "BusyBox v$t" ;;
    echo) echo "kcore-echo $t" ;;
    *) die "no recipe for image $1 (${ref[$1]})" ;;
  esac
}

# reported NAME BIN prints what the binary says its version is.
reported() {
  case "$1" in
    pause) "$2" -v ;;
    coredns) "$2" -version ;;
    local-path-provisioner) "$2" --version ;;
    busybox) "$2" | head -1 ;;
    echo) "$2" -version ;;
    agnhost | agnhost-prev) "$2" --version ;;
    cilium | operator-generic) "$2" --version ;;
  esac 2>&1 || true
}

verify() { reported "$1" "$2" | grep -qF -- "$(expected "$1")"; }

# pinned_module NAME: the nested module that pins NAME's source at its tag.
pinned_module() {
  local dir="$root/tests/images/$1-$(tag "$1")"
  [ -f "$dir/go.mod" ] || die "no pinned module ${dir#"$root"/} for ${ref[$1]}: write it (a go.mod requiring the release, go mod tidy) and commit it"
  echo "$dir"
}

pause_source() {
  local mod="$root/tests/k8sbins/kubernetes-$PAUSE_K8S" dir
  [ -f "$mod/go.mod" ] || die "no pinned module ${mod#"$root"/} for pause.c"
  dir=$(cd "$mod" && go mod download -json k8s.io/kubernetes | awk -F'"' '$2 == "Dir" { print $4 }')
  [ -f "$dir/build/pause/linux/pause.c" ] || die "no build/pause/linux/pause.c in k8s.io/kubernetes $PAUSE_K8S"
  echo "$dir/build/pause/linux/pause.c"
}

busybox_version() {
  dpkg-query -W -f '${Version}' busybox-static 2>/dev/null | sed -E 's/^[0-9]+://; s/-[^-]*$//'
}

# cilium_release prints the directory scripts/build-cilium.sh built the
# agent image's release into, building it first (at once when stamped).
cilium_release() {
  local v
  v=$(tag cilium)
  "$root/scripts/build-cilium.sh" --version "$v" >&2
  echo "${KCORE_CACHE:-$HOME/.cache/kcore}/bin/cilium-$v"
}

# stamp NAME prints what NAME's binary is built from.
stamp() {
  local n=$1 t mod
  t=$(tag "$n")
  echo "image ${ref[$n]}"
  case "$n" in
    pause)
      local src
      src=$(pause_source)
      echo "source k8s.io/kubernetes $PAUSE_K8S build/pause/linux/pause.c $(sha "$src")"
      echo "cc $(gcc -dumpfullversion) -Os -Wall -Werror -static -DVERSION=v$t"
      ;;
    coredns | local-path-provisioner)
      mod=$(pinned_module "$n")
      echo "go.mod $(sha "$mod/go.mod") go.sum $(sha "$mod/go.sum")"
      echo "go $(cd "$mod" && go env GOVERSION) CGO_ENABLED=0"
      ;;
    agnhost | agnhost-prev)
      mod=$(e2e_module)
      echo "go.mod $(sha "$mod/go.mod") go.sum $(sha "$mod/go.sum") agnhost $(agnhost_version)"
      echo "go $(cd "$mod" && go env GOVERSION) CGO_ENABLED=0"
      ;;
    busybox)
      local v
      v=$(busybox_version)
      [ -n "$v" ] || die "Debian's busybox-static is not installed (scripts/deps.sh installs it)"
      # The conformance set's tag is upstream's image version, not busybox's.
      [ "$set" = conformance ] || [ "$v" = "$t" ] || die "${ref[$n]} needs busybox $t, Debian's busybox-static is $v: pin BusyboxImage to docker.io/library/busybox:$v"
      echo "busybox-static $(dpkg-query -W -f '${Version}' busybox-static) $(sha /bin/busybox)"
      if [ "$set" = conformance ]; then
        [ -x /bin/bash-static ] || die "Debian's bash-static is not installed (scripts/deps.sh installs it)"
        echo "bash-static $(dpkg-query -W -f '${Version}' bash-static) $(sha /bin/bash-static)"
      fi
      ;;
    cilium | operator-generic)
      echo "cilium release $(sha "$CILIUM_RELEASE/.stamp")"
      ;;
    echo)
      echo "source $(cat "$root"/tests/images/echo/*.go "$root/go.mod" | sha256sum | cut -d' ' -f1)"
      echo "go $(cd "$root" && go env GOVERSION) CGO_ENABLED=0"
      ;;
  esac
}

# compile NAME DEST builds NAME's binary at DEST.
compile() {
  local n=$1 dest=$2 t
  t=$(tag "$n")
  case "$n" in
    pause) gcc -Os -Wall -Werror -static "-DVERSION=v$t" -o "$dest" "$(pause_source)" ;;
    coredns) (cd "$(pinned_module "$n")" && go build -trimpath -ldflags "-s -w" -o "$dest" github.com/coredns/coredns) ;;
    local-path-provisioner)
      (cd "$(pinned_module "$n")" && go build -trimpath -ldflags "-s -w -X main.VERSION=$t" -o "$dest" github.com/rancher/local-path-provisioner) ;;
    busybox)
      cp /bin/busybox "$dest"
      # The conformance busybox's /bin/sh (the image tool reads it next to busybox).
      if [ "$set" = conformance ]; then cp /bin/bash-static "$(dirname "$dest")/bash-static"; fi
      ;;
    agnhost | agnhost-prev)
      (cd "$(e2e_module)" && go build -trimpath -ldflags "-s -w -X main.Version=$(agnhost_version)" -o "$dest" k8s.io/kubernetes/test/images/agnhost) ;;
    echo) (cd "$root" && go build -trimpath -ldflags "-s -w" -o "$dest" ./tests/images/echo) ;;
    cilium) cp "$CILIUM_RELEASE/cilium-agent" "$dest" ;;
    operator-generic) cp "$CILIUM_RELEASE/cilium-operator-generic" "$dest" ;;
  esac
}

# debian_rootfs NAME PACKAGES makes a Debian root filesystem
# (DIR/bin/NAME.rootfs.tar) once: the conformance set's, the Cilium agent's.
debian_rootfs() {
  local name=$1 packages=$2 tar="$out/bin/$1.rootfs.tar" st t
  command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (apt-get install mmdebstrap)"
  st="mmdebstrap $(dpkg-query -W -f '${Version}' mmdebstrap) $DEBIAN_SUITE minbase $packages"
  if [ "$force" = 0 ] && [ -f "$tar" ] && [ -f "$out/bin/.$name.rootfs.stamp" ] &&
    [ "$(cat "$out/bin/.$name.rootfs.stamp")" = "$st"$'\n'"sha256 $(sha "$tar")" ]; then
    log "$name root filesystem up to date ($tar)"
    return
  fi
  t=$SECONDS
  log "$name root filesystem … mmdebstrap $DEBIAN_SUITE with $packages"
  rm -f "$out/bin/.$name.rootfs.stamp"
  rm -rf "$tar" "$tar.tmp"
  # mmdebstrap picks its output format from the target's extension, and
  # .tmp is none it knows: without --format=tar it writes a directory.
  mmdebstrap --quiet --variant=minbase --format=tar --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' "$DEBIAN_SUITE" "$tar.tmp"
  mv -f "$tar.tmp" "$tar"
  printf '%s\nsha256 %s\n' "$st" "$(sha "$tar")" >"$out/bin/.$name.rootfs.stamp"
  log "$name root filesystem made in $(elapsed "$t") ($(du -h "$tar" | cut -f1))"
}
case "$set" in
  conformance) debian_rootfs debian "$DEBIAN_PACKAGES" ;;
  cilium)
    CILIUM_RELEASE=$(cilium_release)
    # The image tool reads the release's other files through this link.
    ln -sfn "$CILIUM_RELEASE" "$out/bin/cilium-release"
    debian_rootfs cilium "$CILIUM_PACKAGES"
    ;;
esac

built=0
for n in "${names[@]}"; do
  binary "$n" || continue
  bin="$out/bin/$n"
  st=$(stamp "$n")
  if [ "$force" = 0 ] && [ -x "$bin" ] && [ -f "$out/bin/.$n.stamp" ] &&
    [ "$(cat "$out/bin/.$n.stamp")" = "$st"$'\n'"sha256 $(sha "$bin")" ] && verify "$n" "$bin"; then
    log "$n up to date ($bin)"
    continue
  fi
  t=$SECONDS
  log "$n … building for ${ref[$n]}"
  rm -f "$out/bin/.$n.stamp"
  compile "$n" "$bin.tmp"
  if ! verify "$n" "$bin.tmp"; then
    echo "build-images: $n does not report \"$(expected "$n")\"; it says:" >&2
    reported "$n" "$bin.tmp" >&2
    rm -f "$bin.tmp"
    exit 1
  fi
  mv -f "$bin.tmp" "$bin"
  printf '%s\nsha256 %s\n' "$st" "$(sha "$bin")" >"$out/bin/.$n.stamp"
  built=$(( built + 1 ))
  log "$n built in $(elapsed "$t") ($(du -h "$bin" | cut -f1))"
done

archives_stamp=$(
  echo "tool $(sha "$tool")"
  echo "images.go $(sha "$images_go")"
  echo "ca-certificates $(sha /etc/ssl/certs/ca-certificates.crt)"
  for n in "${names[@]}"; do
    if binary "$n"; then echo "$n $(sha "$out/bin/$n")"; fi
  done
  if [ "$set" = conformance ]; then echo "debian $(sha "$out/bin/debian.rootfs.tar")"; fi
  if [ "$set" = cilium ]; then
    echo "cilium rootfs $(sha "$out/bin/cilium.rootfs.tar")"
    echo "cilium release $(sha "$CILIUM_RELEASE/.stamp")"
  fi
)
missing=0
for n in "${names[@]}"; do [ -f "$out/$n.oci.tar" ] || missing=1; done
if [ "$force" = 0 ] && [ "$missing" = 0 ] && [ -f "$out/.archives.stamp" ] && [ "$(cat "$out/.archives.stamp")" = "$archives_stamp" ]; then
  log "archives up to date in $out"
else
  rm -f "$out/.archives.stamp"
  "$tool" build -set "$set" -images "$images_go" -bin-dir "$out/bin" -out "$out"
  printf '%s\n' "$archives_stamp" >"$out/.archives.stamp"
fi
log "$built built, ${#names[@]} images ready in $out after $(elapsed "$start"): ${ref[*]}"
