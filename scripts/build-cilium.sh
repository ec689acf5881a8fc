#!/usr/bin/env bash
# Build the real Cilium binaries the lab runs, from the Go module proxy, into
# the cache the Kubernetes binaries use, once per version: the agent
# (cilium-agent), the operator (cilium-operator-generic, Kubernetes IPAM), the
# CNI plugin (cilium-cni) and the health responder (cilium-health-responder),
# with the agent's datapath sources (bpf/), which it compiles with clang when
# it starts, and the release's Helm chart (chart/), which the node installs
# and upgrades Cilium with.
#
# The version is pinned by a nested Go module committed under
# tests/k8sbins/cilium-vX.Y.Z/ whose go.mod and go.sum fix every dependency;
# the build never changes them (-mod=readonly). Two of Cilium's requirements
# are not served by the module proxy here and are replaced in that module:
# github.com/osrg/gobgp/v4 (Cilium pins an unreleased pseudo-version; the
# release of the same weeks, v4.7.0, differs only in BFD internals the lab
# never runs) and sigs.k8s.io/mcs-api/controllers (the operator takes one
# annotation name from it; a local module of that name holds it). `--pin`
# writes such a module for a version that has none yet (maintainers; commit it).
#
# Binaries land in DIR/cilium-<version>/ with a .stamp naming what they were
# built from; binaries whose stamp matches and which report the expected
# version are not rebuilt. DIR/<link>/ (default DIR/current/) links to them.
# Stamped like upstream's Makefile (pkg/version.ciliumVersion, -tags osusergo,
# CGO_ENABLED=0).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/build-cilium.sh [options]

  --version V   Cilium release to build (default v1.20.2)
USAGE
  common_usage
  cat <<'USAGE'
  --pin         write tests/k8sbins/cilium-<version>/ from the proxy, then stop
                (commit the result)
  -h, --help    this text
USAGE
}

name=build-cilium
default_version=v1.20.2
# shellcheck source=lib/pinned-build.sh
. "$(dirname "$0")/lib/pinned-build.sh"
renice_self "$0" "$@"
pinned_build_args "$@"

root=$(cd "$(dirname "$0")/.." && pwd)
mod="$root/tests/k8sbins/cilium-$version"
module=github.com/cilium/cilium
gobgp_release=v4.7.0

# component -> package it is built from, and the build tags beyond osusergo.
# The commands of upstream's cilium and operator-generic images (the agent's
# image runs cilium-dbg, cilium-mount and cilium-sysctlfix in its init
# containers; hubble, bugtool and the Envoy bootstrap tool are left out).
declare -A pkg=(
  [cilium-agent]=$module/daemon
  [cilium-operator-generic]=$module/operator
  [cilium-cni]=$module/plugins/cilium-cni
  [cilium-health-responder]=$module/cilium-health/responder
  [cilium-health]=$module/cilium-health
  [cilium-dbg]=$module/cilium-dbg
  [cilium-mount]=$module/tools/mount
  [cilium-sysctlfix]=$module/tools/sysctlfix
)
declare -A tags=([cilium-operator-generic]=ipam_provider_operator)
components=(cilium-agent cilium-operator-generic cilium-cni cilium-health-responder cilium-health cilium-dbg cilium-mount cilium-sysctlfix)
# The image's shell scripts, from the module: the init container's state
# cleaner and the CNI plugin's install and uninstall scripts.
scripts=(images/cilium/init-container.sh plugins/cilium-cni/install-plugin.sh plugins/cilium-cni/cni-uninstall.sh)

export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false"

# pin_cilium writes the nested module that pins Cilium at one release, with
# the two replaces the header explains.
pin_cilium() {
  local gomod gover c
  gomod=$(upstream_gomod "$module" "$version")
  gover=$(awk '$1 == "go" { print $2; exit }' "$gomod")
  mkdir -p "$mod/mcs-api-controllers"
  cat >"$mod/mcs-api-controllers/go.mod" <<'EOF'
// The one name Cilium takes from sigs.k8s.io/mcs-api/controllers, which the
// module proxy does not serve. Written by scripts/build-cilium.sh --pin.
module sigs.k8s.io/mcs-api/controllers

go 1.24
EOF
  cat >"$mod/mcs-api-controllers/controllers.go" <<'EOF'
// Package controllers holds the one name Cilium takes from the MCS API
// controllers module, which the Go module proxy here does not serve.
package controllers

// DerivedServiceAnnotation names the Service derived from a ServiceImport.
const DerivedServiceAnnotation = "multicluster.kubernetes.io/derived-service"
EOF
  {
    cat <<EOF
// Pins Cilium $version for the lab: the commands of its agent and operator
// images exactly as released, with gobgp at its release $gobgp_release and the
// MCS API controllers' one constant from ./mcs-api-controllers (neither of
// Cilium's pins is served here). Written by scripts/build-cilium.sh --pin; the
// build never edits it.
module kcore.dev/kcore/tests/k8sbins/cilium-$version

go $gover

tool (
EOF
    for c in "${components[@]}"; do printf '\t%s\n' "${pkg[$c]}"; done
    cat <<EOF
)

require $module $version

replace github.com/osrg/gobgp/v4 => github.com/osrg/gobgp/v4 $gobgp_release

replace sigs.k8s.io/mcs-api/controllers => ./mcs-api-controllers
EOF
  } >"$mod/go.mod"
  (cd "$mod" && GOFLAGS=-mod=mod go mod tidy)
  log "pinned cilium $version in ${mod#"$root"/}"
}

pin_or_require pin_cilium

lock_cache "$out" .lock-cilium

# verify reads all of a binary's --version output before matching it (a
# grep -q under pipefail could SIGPIPE the binary and fail the check).
expected="cilium-agent ${version#v} go version"
verify() {
  local said
  said=$("$1" --version 2>&1) || return 1
  [[ $said == "$expected "* ]]
}

ldflags="-s -w -X $module/pkg/version.ciliumVersion=${version#v}"
dest="$out/cilium-$version"
# go mod download, not go list -m: on an empty module cache the latter
# names no directory (it does not download).
src=$(cd "$mod" && go mod download -json "$module" | awk -F'"' '$2 == "Dir" { print $4 }')
[ -d "$src/bpf" ] || { echo "build-cilium: $module $version has no bpf/ sources in $src" >&2; exit 1; }
stamp=$(printf 'component cilium\nversion %s\n' "$version"; module_stamp "$ldflags")

# current_stamp prints what the stamp of the binaries in dest must be.
current_stamp() {
  local c
  echo "$stamp"
  for c in "${components[@]}"; do
    echo "$c tags=osusergo${tags[$c]:+,${tags[$c]}} sha256 $(sha256sum <"$dest/$c" | cut -d' ' -f1)"
  done
}

up_to_date() {
  local c
  [ "$force" = 0 ] && [ -f "$dest/.stamp" ] && [ -d "$dest/bpf" ] && [ -d "$dest/scripts" ] || return 1
  for c in "${components[@]}"; do [ -x "$dest/$c" ] || return 1; done
  [ "$(cat "$dest/.stamp")" = "$(current_stamp)" ] || return 1
  verify "$dest/cilium-agent"
}

# copy_tree SRC NAME replaces dest/NAME with a writable copy of SRC (the
# module cache's files are read-only).
copy_tree() {
  rm -rf "$dest/$2.tmp"
  cp -r "$1" "$dest/$2.tmp"
  chmod -R u+w "$dest/$2.tmp"
  rm -rf "${dest:?}/$2"
  mv "$dest/$2.tmp" "$dest/$2"
}

if up_to_date; then
  log "cilium $version up to date ($dest)"
  # A cache stamped before the chart was kept beside the binaries gets it
  # without a rebuild: it comes from the same module the stamp names.
  [ -f "$dest/chart/Chart.yaml" ] || copy_tree "$src/install/kubernetes/cilium" chart
else
  mkdir -p "$dest"
  rm -f "$dest/.stamp"
  for c in "${components[@]}"; do
    log "cilium $version … building $c (${pkg[$c]})"
    (cd "$mod" && CGO_ENABLED=0 go build -trimpath -tags "osusergo${tags[$c]:+,${tags[$c]}}" -ldflags "$ldflags" -o "$dest/$c.tmp" "${pkg[$c]}")
    mv -f "$dest/$c.tmp" "$dest/$c"
  done
  if ! verify "$dest/cilium-agent"; then
    echo "build-cilium: cilium-agent does not report $expected; it says:" >&2
    "$dest/cilium-agent" --version >&2 || true
    exit 1
  fi
  copy_tree "$src/bpf" bpf
  copy_tree "$src/install/kubernetes/cilium" chart
  rm -rf "$dest/scripts"
  mkdir -p "$dest/scripts"
  for f in "${scripts[@]}"; do install -m 0755 "$src/$f" "$dest/scripts/"; done
  current_stamp >"$dest/.stamp"
  log "cilium $version built in $(elapsed "$start") ($(du -sh "$dest" | cut -f1))"
fi

mkdir -p "$out/$link"
for c in "${components[@]}"; do
  ln -sfn "../cilium-$version/$c" "$out/$link/$c"
done
ln -sfn "../cilium-$version/bpf" "$out/$link/cilium-bpf"
ln -sfn "../cilium-$version/chart" "$out/$link/cilium-chart"
ln -sfn "../cilium-$version/scripts" "$out/$link/cilium-scripts"
log "cilium $version ready in $out/$link after $(elapsed "$start")"
