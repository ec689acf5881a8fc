#!/usr/bin/env bash
# Build the real OpenTofu command (tofu) the Terraform provider tests drive,
# from the Go module proxy, into the cache the Kubernetes binaries use, once
# per version.
#
# The version is pinned by a nested Go module committed under
# tests/tofubin/opentofu-vX.Y.Z/ whose go.mod and go.sum fix every dependency
# (with upstream's godebug settings and its replace of hashicorp/hcl by
# OpenTofu's fork); the build never changes them (-mod=readonly). `--pin`
# writes such a module for a version that has none yet (maintainers; commit it).
#
# The binary lands in DIR/tofu-<version>/tofu with a .stamp next to it naming
# what it was built from; a binary whose stamp matches and which reports the
# expected version is not rebuilt. DIR/<link>/tofu (default DIR/current/tofu)
# links to it. Stamped like upstream's release build: version.dev=no.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/build-tofu.sh [options]

  --version V   OpenTofu release to build (default v1.12.6)
USAGE
  common_usage
  cat <<'USAGE'
  --pin         write tests/tofubin/opentofu-<version>/ go.mod and go.sum from the
                proxy, then stop (commit the result)
  -h, --help    this text
USAGE
}

name=build-tofu
default_version=v1.12.6
# shellcheck source=lib/pinned-build.sh
. "$(dirname "$0")/lib/pinned-build.sh"
renice_self "$0" "$@"
pinned_build_args "$@"

root=$(cd "$(dirname "$0")/.." && pwd)
mod="$root/tests/tofubin/opentofu-$version"
module=github.com/opentofu/opentofu
pkg=$module/cmd/tofu

export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false"

# pin_tofu writes the nested module that pins OpenTofu at one release: the
# upstream module's godebug settings and replace directives (a dependency's
# are ignored, so they must be repeated here).
pin_tofu() {
  local gomod gover
  gomod=$(upstream_gomod "$module" "$version")
  gover=$(awk '$1 == "go" { print $2; exit }' "$gomod")
  mkdir -p "$mod"
  {
    cat <<PIN
// Pins OpenTofu $version for the Terraform provider tests: the tofu command
// exactly as released, with upstream's godebug settings and replaces. Written by
// scripts/build-tofu.sh --pin; the build never edits it.
module kcore.dev/kcore/tests/tofubin/opentofu-$version

go $gover

PIN
    awk '/^godebug \($/ { inblock = 1 } inblock { sub(/ *\/\/.*/, ""); print } /^\)$/ && inblock { inblock = 0; print "" } /^godebug [^(]/ { print; print "" }' "$gomod"
    echo "tool $pkg"
    echo
    echo "require $module $version"
    echo
    awk '/^replace [^(]/ { print } /^replace \($/ { inblock = 1 } inblock { print } /^\)$/ && inblock { inblock = 0 }' "$gomod"
  } >"$mod/go.mod"
  (cd "$mod" && GOFLAGS=-mod=mod go mod tidy)
  log "pinned opentofu $version in ${mod#"$root"/}"
}

pin_or_require pin_tofu

lock_cache "$out" .lock-tofu

expected="OpenTofu $version"
# verify reads all of tofu's output before matching: with pipefail, a grep -q
# that exits at the first line would SIGPIPE tofu and fail the check.
verify() {
  local said
  said=$(TF_CLI_CONFIG_FILE=/dev/null "$1" version 2>/dev/null) || return 1
  grep -qxF "$expected" <<<"$said"
}

ldflags="-s -w -X $module/version.dev=no"
build_one tofu "$pkg" "$ldflags"
