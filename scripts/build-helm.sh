#!/usr/bin/env bash
# Build the real Helm command (helm), which installs and upgrades Cilium's
# chart on a cluster's bootstrap control plane and which the render tests run
# over that chart, from the Go module proxy, into the cache the Kubernetes
# binaries use, once per version.
#
# The version is pinned by a nested Go module committed under
# tests/k8sbins/helm-vX.Y.Z/ whose go.mod and go.sum fix every dependency; the
# build never changes them (-mod=readonly). `--pin` writes such a module for a
# version that has none yet (maintainers; commit it).
#
# The binary lands in DIR/helm-<version>/helm with a .stamp next to it naming
# what it was built from; a binary whose stamp matches and which reports the
# expected version is not rebuilt. DIR/<link>/helm (default DIR/current/helm)
# links to it. Stamped like upstream's release build of a tag
# (internal/version.version, empty metadata).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/build-helm.sh [options]

  --version V   Helm release to build (default v4.3.2)
USAGE
  common_usage
  cat <<'USAGE'
  --pin         write tests/k8sbins/helm-<version>/ go.mod and go.sum from the
                proxy, then stop (commit the result)
  -h, --help    this text
USAGE
}

name=build-helm
default_version=v4.3.2
# shellcheck source=lib/pinned-build.sh
. "$(dirname "$0")/lib/pinned-build.sh"
renice_self "$0" "$@"
pinned_build_args "$@"

root=$(cd "$(dirname "$0")/.." && pwd)
mod="$root/tests/k8sbins/helm-$version"
module=helm.sh/helm/${version%%.*}
pkg=$module/cmd/helm

export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false"

# pin_helm writes the nested module that pins Helm at one release.
pin_helm() {
  local gomod gover
  gomod=$(upstream_gomod "$module" "$version")
  gover=$(awk '$1 == "go" { print $2; exit }' "$gomod")
  mkdir -p "$mod"
  cat >"$mod/go.mod" <<PIN
// Pins Helm $version: the helm command exactly as released. Written by
// scripts/build-helm.sh --pin; the build never edits it.
module kcore.dev/kcore/tests/k8sbins/helm-$version

go $gover

tool $pkg

require $module $version
PIN
  (cd "$mod" && GOFLAGS=-mod=mod go mod tidy)
  log "pinned helm $version in ${mod#"$root"/}"
}

pin_or_require pin_helm

lock_cache "$out" .lock-helm

# verify reads all of helm's output before matching (a grep -q under
# pipefail could SIGPIPE helm and fail the check).
verify() {
  local said
  said=$(HELM_CONFIG_HOME=/nonexistent "$1" version --template '{{.Version}}' 2>/dev/null) || return 1
  [ "$said" = "$version" ]
}

expected=$version
ldflags="-s -w -X $module/internal/version.version=$version -X $module/internal/version.metadata="
build_one helm "$pkg" "$ldflags"
