#!/usr/bin/env bash
# Build the real Kubernetes, etcd and containerd binaries the lab runs, from the
# Go module proxy, into a cache directory, once per version.
#
# Each version is pinned by a nested Go module committed under tests/k8sbins/
# (kubernetes-vX.Y.Z/, etcd-vX.Y.Z/, containerd-vX.Y.Z/) whose go.mod and go.sum fix every
# dependency; the build never changes them (-mod=readonly). `--pin` writes
# such a module for a version that has none yet (maintainers; commit it).
#
# Binaries land in DIR/<component>-<version>/<component>, with a .stamp next
# to each naming what it was built from; a binary whose stamp matches and
# which reports the expected version is not rebuilt. DIR/<link>/ (default
# DIR/current/) holds symlinks to the binaries of the versions asked for.
#
# Versions are stamped like upstream's hack/lib/version.sh does, through
# -ldflags -X on k8s.io/component-base/version and k8s.io/client-go/pkg/version,
# with buildDate set to the release's commit time from the proxy so that two
# builds of one version are byte-identical. containerd is stamped like its
# Makefile does (-X …/version.Version), statically (CGO_ENABLED=0) and without
# the btrfs, devmapper and zfs snapshotters; runc comes from the distribution.
#
# e2e.test, upstream's conformance suite (go test -c of k8s.io/kubernetes/test/e2e,
# stamped like the Kubernetes binaries), and ginkgo, the command that runs it on
# several processes at once, are built only when --only names them: both are
# pinned by a module of its own, tests/k8sbins/kubernetes-e2e-vX.Y.Z/ (ginkgo at
# the version e2e.test links), so that their dependencies never move the cluster
# binaries' pins.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/build-k8s.sh [options]

  --k8s-version V    Kubernetes release to build (default v1.37.2)
  --etcd-version V   etcd release to build (default v3.7.3)
  --containerd-version V
                     containerd release to build (default v2.4.2)
  --out DIR          cache of binaries (default ${KCORE_CACHE:-$HOME/.cache/kcore}/bin)
  --link NAME        name of the symlink directory in DIR (default current)
  --only LIST        comma-separated subset of: etcd,etcdctl,etcdutl,kube-apiserver,
                     kube-controller-manager,kube-scheduler,kubelet,kube-proxy,kubectl,
                     containerd,containerd-shim-runc-v2,ctr; and e2e.test (the
                     conformance suite) and ginkgo (its parallel runner), built
                     only when named here
  --force            rebuild even when the stamp matches
  --pin              write tests/k8sbins/<name>-<version>/ go.mod and go.sum for the
                     requested versions from the proxy, then stop (commit the result)
  -h, --help         this text
EOF
}

# Long compiles must not starve whatever else runs on the machine.
if [ "$(nice)" -lt 19 ]; then
  exec nice -n 19 "$0" "$@"
fi

k8s_version=v1.37.2
etcd_version=v3.7.3
containerd_version=v2.4.2
out="${KCORE_CACHE:-$HOME/.cache/kcore}/bin"
link=current
only=""
force=0
pin=0

while [ $# -gt 0 ]; do
  case "$1" in
    --k8s-version) k8s_version=${2:?--k8s-version needs a value}; shift 2 ;;
    --etcd-version) etcd_version=${2:?--etcd-version needs a value}; shift 2 ;;
    --containerd-version) containerd_version=${2:?--containerd-version needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --link) link=${2:?--link needs a value}; shift 2 ;;
    --only) only=${2:?--only needs a value}; shift 2 ;;
    --force) force=1; shift ;;
    --pin) pin=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "build-k8s: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done

[[ $k8s_version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "build-k8s: --k8s-version must look like v1.37.2, got $k8s_version" >&2; exit 2; }
k8s_minor=${BASH_REMATCH[1]}
k8s_patch=${BASH_REMATCH[2]}
[[ $etcd_version =~ ^v3\.[0-9]+\.[0-9]+$ ]] || { echo "build-k8s: --etcd-version must look like v3.7.3, got $etcd_version" >&2; exit 2; }
[[ $containerd_version =~ ^v2\.[0-9]+\.[0-9]+$ ]] || { echo "build-k8s: --containerd-version must look like v2.4.2, got $containerd_version" >&2; exit 2; }
[[ $link =~ ^[A-Za-z0-9._-]+$ ]] || { echo "build-k8s: --link must be a plain name, got $link" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
k8s_mod="$root/tests/k8sbins/kubernetes-$k8s_version"
e2e_mod="$root/tests/k8sbins/kubernetes-e2e-$k8s_version"
etcd_mod="$root/tests/k8sbins/etcd-$etcd_version"
containerd_mod="$root/tests/k8sbins/containerd-$containerd_version"

# component -> package it is built from
declare -A pkg=(
  [etcd]=go.etcd.io/etcd/server/v3
  [etcdctl]=go.etcd.io/etcd/etcdctl/v3
  [etcdutl]=go.etcd.io/etcd/etcdutl/v3
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kubelet]=k8s.io/kubernetes/cmd/kubelet
  [kube-proxy]=k8s.io/kubernetes/cmd/kube-proxy
  [kubectl]=k8s.io/kubernetes/cmd/kubectl
  [containerd]=github.com/containerd/containerd/v2/cmd/containerd
  [containerd-shim-runc-v2]=github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
  [ctr]=github.com/containerd/containerd/v2/cmd/ctr
  [e2e.test]=k8s.io/kubernetes/test/e2e
  [ginkgo]=github.com/onsi/ginkgo/v2/ginkgo
)
all_components=(etcd etcdctl etcdutl kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl containerd containerd-shim-runc-v2 ctr)
etcd_components=(etcd etcdctl etcdutl)
containerd_components=(containerd containerd-shim-runc-v2 ctr)
k8s_components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false"

start=$SECONDS
log() { printf '[build] %s\n' "$*" >&2; }
elapsed() { local s=$(( SECONDS - $1 )); printf '%dm%02ds' $(( s / 60 )) $(( s % 60 )); }

# pin_etcd writes the nested module that pins etcd and etcdctl at one release.
pin_etcd() {
  local dir=$etcd_mod gover
  local gomod
  gomod=$(upstream_gomod go.etcd.io/etcd/server/v3 "$etcd_version")
  gover=$(awk '$1 == "go" { print $2; exit }' "$gomod")
  mkdir -p "$dir"
  cat >"$dir/go.mod" <<EOF
// Pins etcd $etcd_version for the lab: the etcd, etcdctl and etcdutl commands
// exactly as released. Written by scripts/build-k8s.sh --pin; the build never edits it.
module kcore.dev/kcore/tests/k8sbins/etcd-$etcd_version

go $gover

tool (
	go.etcd.io/etcd/etcdctl/v3
	go.etcd.io/etcd/etcdutl/v3
	go.etcd.io/etcd/server/v3
)

require (
	go.etcd.io/etcd/etcdctl/v3 $etcd_version
	go.etcd.io/etcd/etcdutl/v3 $etcd_version
	go.etcd.io/etcd/server/v3 $etcd_version
)
EOF
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy)
  log "pinned etcd $etcd_version in ${dir#"$root"/}"
}

# pin_containerd writes the nested module that pins containerd at one release.
pin_containerd() {
  local dir=$containerd_mod gover gomod
  gomod=$(upstream_gomod github.com/containerd/containerd/v2 "$containerd_version")
  gover=$(awk '$1 == "go" { print $2; exit }' "$gomod")
  mkdir -p "$dir"
  cat >"$dir/go.mod" <<EOF
// Pins containerd $containerd_version for the lab: the containerd, containerd-shim-runc-v2 and
// ctr commands exactly as released. Written by scripts/build-k8s.sh --pin; the build never edits it.
module kcore.dev/kcore/tests/k8sbins/containerd-$containerd_version

go $gover

tool (
	${pkg[containerd]}
	${pkg[containerd-shim-runc-v2]}
	${pkg[ctr]}
)

require github.com/containerd/containerd/v2 $containerd_version
EOF
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy)
  log "pinned containerd $containerd_version in ${dir#"$root"/}"
}

# pin_kubernetes writes the nested module that pins Kubernetes at one release:
# k8s.io/kubernetes itself, each staging module it replaces with a local path
# replaced by the matching published v0.MINOR.PATCH release instead, and the
# godebug settings of the upstream main module (a dependency's are ignored).
pin_kubernetes() {
  local dir=$k8s_mod gover staging gomod
  gomod=$(upstream_gomod k8s.io/kubernetes "$k8s_version")
  gover=$(awk '$1 == "go" { print $2; exit }' "$gomod")
  staging="v0.$k8s_minor.$k8s_patch"
  mkdir -p "$dir"
  {
    cat <<EOF
// Pins Kubernetes $k8s_version for the lab: k8s.io/kubernetes as released, with each
// staging module it replaces by a local path replaced by its published release
// ($staging). Written by scripts/build-k8s.sh --pin; the build never edits it.
module kcore.dev/kcore/tests/k8sbins/kubernetes-$k8s_version

go $gover

EOF
    awk '/^godebug \($/ { inblock = 1 } inblock { print } /^\)$/ && inblock { inblock = 0; print "" } /^godebug [^(]/ { print; print "" }' "$gomod"
    echo "tool ("
    local c
    for c in "${k8s_components[@]}"; do printf '\t%s\n' "${pkg[$c]}"; done
    echo ")"
    echo
    echo "require k8s.io/kubernetes $k8s_version"
    echo
    echo "replace ("
    awk -v v="$staging" '$2 == "=>" && $3 ~ /^\.\/staging\/src\// { printf "\t%s => %s %s\n", $1, $1, v }' "$gomod"
    echo ")"
  } >"$dir/go.mod"
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy)
  log "pinned kubernetes $k8s_version in ${dir#"$root"/}"
}

# pin_kubernetes_e2e writes the nested module that pins the conformance suite
# (test/e2e, and test/images/agnhost the conformance images are built from) at
# one release, laid out like pin_kubernetes's; go list -test adds the sums of
# the test-only packages e2e.test links, which go mod tidy leaves out.
pin_kubernetes_e2e() {
  local dir=$e2e_mod
  pin_kubernetes
  mkdir -p "$dir"
  awk -v name="kubernetes-e2e-$k8s_version" '
    /^\/\/ Pins Kubernetes/ { print "// Pins the conformance suite of Kubernetes " v " for the lab: e2e.test and agnhost"; skip = 1; next }
    skip && /^\/\// { if ($0 ~ /Written by/) { print "// as released, with each staging module replaced by its published release. Kept"; print "// apart from the cluster binaries'"'"' module so test-only dependencies never move their"; print "// pins. Written by scripts/build-k8s.sh --pin; the build never edits it." } ; next }
    { skip = 0 }
    /^module / { print "module kcore.dev/kcore/tests/k8sbins/" name; next }
    /^tool \($/ { intool = 1; print "tool ("; print "\tgithub.com/onsi/ginkgo/v2/ginkgo"; print "\tk8s.io/kubernetes/test/e2e"; print "\tk8s.io/kubernetes/test/images/agnhost"; next }
    intool && /^\)$/ { intool = 0; print; next }
    intool { next }
    { print }
  ' v="$k8s_version" "$k8s_mod/go.mod" >"$dir/go.mod"
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy && GOFLAGS=-mod=mod go list -test -deps k8s.io/kubernetes/test/e2e >/dev/null)
  log "pinned the kubernetes $k8s_version conformance suite in ${dir#"$root"/}"
}

# upstream_gomod prints the path of the go.mod the proxy serves for MODULE@VERSION.
upstream_gomod() {
  local tmp path
  tmp=$(mktemp -d)
  path=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$1@$2" | awk -F'"' '$2 == "GoMod" { print $4 }')
  rmdir "$tmp"
  [ -n "$path" ] || { echo "build-k8s: the proxy gave no go.mod for $1@$2" >&2; exit 1; }
  echo "$path"
}

if [ "$pin" = 1 ]; then
  pin_etcd
  pin_kubernetes_e2e
  pin_containerd
  exit 0
fi

# The components to build, in order.
want=()
if [ -n "$only" ]; then
  IFS=, read -ra want <<<"$only"
  for c in "${want[@]}"; do
    [ -n "${pkg[$c]:-}" ] || { echo "build-k8s: unknown component $c (known: ${all_components[*]} e2e.test ginkgo)" >&2; exit 2; }
  done
else
  want=("${all_components[@]}")
fi

mods=("$etcd_mod" "$k8s_mod" "$containerd_mod")
case " ${want[*]} " in *" e2e.test "* | *" ginkgo "*) mods+=("$e2e_mod") ;; esac
for dir in "${mods[@]}"; do
  if [ ! -f "$dir/go.mod" ]; then
    echo "build-k8s: no pinned module ${dir#"$root"/}; run scripts/build-k8s.sh --pin --k8s-version $k8s_version --etcd-version $etcd_version --containerd-version $containerd_version and commit it" >&2
    exit 1
  fi
done

# ginkgo is built at the version the conformance suite's module pins.
ginkgo_version=""
case " ${want[*]} " in
  *" ginkgo "*)
    ginkgo_version=$(awk '$1 == "github.com/onsi/ginkgo/v2" { print $2; exit }' "$e2e_mod/go.mod")
    [ -n "$ginkgo_version" ] || { echo "build-k8s: ${e2e_mod#"$root"/}/go.mod pins no github.com/onsi/ginkgo/v2" >&2; exit 1; }
    ;;
esac

mkdir -p "$out"
exec 9>"$out/.lock"
if ! flock -n 9; then
  log "waiting for another build-k8s.sh using $out"
  flock 9
fi

# module_time prints the proxy's commit time of MODULE as the nested module at
# DIR resolves it, in the UTC form Kubernetes uses for buildDate.
module_time() {
  (cd "$1" && go list -m -json "$2") | awk -F'"' '$2 == "Time" { print $4; exit }'
}

# module_sum prints the go.sum line of MODULE@VERSION in DIR.
module_sum() {
  awk -v m="$2" -v v="$3" '$1 == m && $2 == v { print $3 }' "$1/go.sum"
}

k8s_ldflags() {
  local date ldflags="-s -w" key val
  date=$(module_time "$k8s_mod" k8s.io/kubernetes)
  [ -n "$date" ] || { echo "build-k8s: no commit time for k8s.io/kubernetes $k8s_version" >&2; exit 1; }
  local -a vars=(
    "gitVersion=$k8s_version"
    "gitMajor=1"
    "gitMinor=$k8s_minor"
    "gitCommit="
    "gitTreeState=archive"
    "buildDate=$date"
  )
  for val in "${vars[@]}"; do
    for key in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X $key.$val"
    done
  done
  echo "$ldflags"
}

# expected_version prints the version line a component must print.
expected_version() {
  case "$1" in
    etcd) echo "etcd Version: ${etcd_version#v}" ;;
    etcdctl) echo "etcdctl version: ${etcd_version#v}" ;;
    etcdutl) echo "etcdutl version: ${etcd_version#v}" ;;
    kubectl) echo "Client Version: $k8s_version" ;;
    e2e.test) echo "$k8s_version" ;;
    ginkgo) echo "Ginkgo Version ${ginkgo_version#v}" ;;
    containerd | ctr) echo "$1 github.com/containerd/containerd/v2 $containerd_version" ;;
    containerd-shim-runc-v2) echo "  Version:  $containerd_version" ;;
    *) echo "Kubernetes $k8s_version" ;;
  esac
}

# reported_version prints what the binary says about its version.
reported_version() {
  case "$1" in
    etcd) "$2" --version ;;
    etcdctl | etcdutl) "$2" version ;;
    kubectl) "$2" version --client ;;
    # containerd prints its (empty) git revision after the version.
    containerd | ctr) "$2" --version | sed 's/ *$//' ;;
    containerd-shim-runc-v2) "$2" -v ;;
    e2e.test) "$2" -version ;;
    ginkgo) "$2" version ;;
    *) "$2" --version ;;
  esac 2>&1 || true
}

verify() {
  reported_version "$1" "$2" | grep -qxF "$(expected_version "$1")"
}

declare -A ldflags_for=()
built=0
for c in "${want[@]}"; do
  case " ${etcd_components[*]} " in
    *" $c "*) version=$etcd_version mod=$etcd_mod module=go.etcd.io/etcd/server/v3 ;;
    *) version=$k8s_version mod=$k8s_mod module=k8s.io/kubernetes ;;
  esac
  case " ${containerd_components[*]} " in
    *" $c "*) version=$containerd_version mod=$containerd_mod module=github.com/containerd/containerd/v2 ;;
  esac
  if [ "$c" = e2e.test ]; then mod=$e2e_mod; fi
  if [ "$c" = ginkgo ]; then version=$ginkgo_version mod=$e2e_mod module=github.com/onsi/ginkgo/v2; fi
  if [ "$module" = k8s.io/kubernetes ]; then
    [ -n "${ldflags_for[k8s]:-}" ] || ldflags_for[k8s]=$(k8s_ldflags)
    ldflags=${ldflags_for[k8s]}
    # One tag set for every Kubernetes binary, e2e.test included, so the
    # packages e2e.test shares with the cluster binaries (apimachinery,
    # client-go, the API types: 2,366 of its 2,582) compile once: without
    # notest, meta/v1 gains its fuzzing helpers and every package above it
    # compiles a second time. notest drops nothing else e2e.test links.
    tags=selinux,notest,grpcnotrace
  elif [ "$module" = github.com/containerd/containerd/v2 ]; then
    ldflags="-s -w -X $module/version.Version=$containerd_version"
    tags=no_btrfs,no_devmapper,no_zfs
    # The shim serves ttrpc only, as upstream builds it.
    if [ "$c" = containerd-shim-runc-v2 ]; then tags+=,no_grpc; fi
  else
    ldflags="-s -w"
    tags=""
  fi
  dest="$out/$c-$version"
  bin="$dest/$c"
  goversion=$(cd "$mod" && go env GOVERSION)
  stamp=$(cat <<EOF
component $c
version $version
package ${pkg[$c]}
module $module $version $(module_sum "$mod" "$module" "$version")
go.mod $(sha256sum <"$mod/go.mod" | cut -d' ' -f1)
go.sum $(sha256sum <"$mod/go.sum" | cut -d' ' -f1)
go $goversion $(go env GOOS)/$(go env GOARCH) CGO_ENABLED=0
tags $tags
ldflags $ldflags
EOF
)
  if [ "$force" = 0 ] && [ -x "$bin" ] && [ -f "$dest/.stamp" ] &&
    [ "$(cat "$dest/.stamp")" = "$stamp"$'\n'"sha256 $(sha256sum <"$bin" | cut -d' ' -f1)" ] &&
    verify "$c" "$bin"; then
    log "$c $version up to date ($bin)"
    continue
  fi
  mkdir -p "$dest"
  t=$SECONDS
  log "$c $version … building ${pkg[$c]} in ${mod#"$root"/}"
  rm -f "$dest/.stamp"
  if [ "$c" = e2e.test ]; then
    # A test binary: go test -c, upstream's way of building it.
    (cd "$mod" && CGO_ENABLED=0 go test -c -trimpath -tags "$tags" \
      -ldflags "$ldflags" -o "$bin.tmp" "${pkg[$c]}")
  else
    (cd "$mod" && CGO_ENABLED=0 go build -trimpath -tags "$tags" \
      -ldflags "$ldflags" -o "$bin.tmp" "${pkg[$c]}")
  fi
  if ! verify "$c" "$bin.tmp"; then
    echo "build-k8s: $c does not report \"$(expected_version "$c")\"; it says:" >&2
    reported_version "$c" "$bin.tmp" >&2
    rm -f "$bin.tmp"
    exit 1
  fi
  mv -f "$bin.tmp" "$bin"
  printf '%s\nsha256 %s\n' "$stamp" "$(sha256sum <"$bin" | cut -d' ' -f1)" >"$dest/.stamp"
  built=$(( built + 1 ))
  log "$c $version built in $(elapsed "$t") ($(du -h "$bin" | cut -f1))"
done

mkdir -p "$out/$link"
for c in "${want[@]}"; do
  case " ${etcd_components[*]} " in
    *" $c "*) version=$etcd_version ;;
    *) version=$k8s_version ;;
  esac
  case " ${containerd_components[*]} " in
    *" $c "*) version=$containerd_version ;;
  esac
  if [ "$c" = ginkgo ]; then version=$ginkgo_version; fi
  ln -sfn "../$c-$version/$c" "$out/$link/$c"
done
log "$built built, ${#want[@]} ready in $out/$link/ (kubernetes $k8s_version, etcd $etcd_version, containerd $containerd_version) after $(elapsed "$start")"
