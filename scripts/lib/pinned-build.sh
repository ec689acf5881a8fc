# Shared by the scripts that build one upstream release from a nested Go
# module pinned under tests/ (build-tofu.sh, build-helm.sh, build-cilium.sh):
# the niceness, the common options and their help, logging, the proxy's
# go.mod, the cache lock and the stamped build of a single binary.
# Source it after setting `name` (the script's name in messages) and
# `default_version`, and defining `usage`; then call pinned_build_args "$@".

# Long compiles must not starve whatever else runs on the machine: the caller
# runs `renice_self "$0" "$@"` first.
renice_self() {
  if [ "$(nice)" -lt 19 ]; then
    exec nice -n 19 "$@"
  fi
}

# common_usage prints the help lines of the options pinned_build_args
# parses besides --version and --pin.
common_usage() {
  cat <<'USAGE'
  --out DIR     cache of binaries (default ${KCORE_CACHE:-$HOME/.cache/kcore}/bin)
  --link NAME   name of the symlink directory in DIR (default current)
  --force       rebuild even when the stamp matches
USAGE
}

# pinned_build_args parses --version, --out, --link, --force, --pin and -h
# into version, out, link, force and pin, and checks them.
pinned_build_args() {
  version=$default_version
  out="${KCORE_CACHE:-$HOME/.cache/kcore}/bin"
  link=current
  force=0
  pin=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --version) version=${2:?--version needs a value}; shift 2 ;;
      --out) out=${2:?--out needs a value}; shift 2 ;;
      --link) link=${2:?--link needs a value}; shift 2 ;;
      --force) force=1; shift ;;
      --pin) pin=1; shift ;;
      -h | --help) usage; exit 0 ;;
      *) echo "$name: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
  done
  [[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "$name: --version must look like $default_version, got $version" >&2; exit 2; }
  [[ $link =~ ^[A-Za-z0-9._-]+$ ]] || { echo "$name: --link must be a plain name, got $link" >&2; exit 2; }
}

start=$SECONDS
log() { printf '[build] %s\n' "$*" >&2; }
elapsed() { local s=$(( SECONDS - $1 )); printf '%dm%02ds' $(( s / 60 )) $(( s % 60 )); }

# upstream_gomod prints the path of the go.mod the proxy serves for MODULE@VERSION.
upstream_gomod() {
  local tmp path
  tmp=$(mktemp -d)
  path=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$1@$2" | awk -F'"' '$2 == "GoMod" { print $4 }')
  rmdir "$tmp"
  [ -n "$path" ] || { echo "$name: the proxy gave no go.mod for $1@$2" >&2; exit 1; }
  echo "$path"
}

# lock_cache DIR LOCKNAME takes DIR/LOCKNAME on fd 9, waiting for another run
# that holds it.
lock_cache() {
  mkdir -p "$1"
  exec 9>"$1/$2"
  if ! flock -n 9; then
    log "waiting for another $name using $1"
    flock 9
  fi
}

# pin_or_require PINFN: with --pin, runs PINFN (which writes the module at
# mod) and exits; otherwise stops unless mod holds a pinned module.
pin_or_require() {
  if [ "$pin" = 1 ]; then
    "$1"
    exit 0
  fi
  if [ ! -f "$mod/go.mod" ]; then
    echo "$name: no pinned module ${mod#"$root"/}; run scripts/$name.sh --pin --version $version and commit it" >&2
    exit 1
  fi
}

# module_stamp LDFLAGS prints the lines of a stamp that name what a build
# of the pinned module (module, version, mod) is made of: the module's sum,
# the pinning go.mod and go.sum, the toolchain and the flags.
module_stamp() {
  local sum
  sum=$(awk -v m="$module" -v v="$version" '$1 == m && $2 == v { print $3 }' "$mod/go.sum")
  cat <<STAMP
module $module $version $sum
go.mod $(sha256sum <"$mod/go.mod" | cut -d' ' -f1)
go.sum $(sha256sum <"$mod/go.sum" | cut -d' ' -f1)
go $(cd "$mod" && go env GOVERSION) $(go env GOOS)/$(go env GOARCH) CGO_ENABLED=0
ldflags $1
STAMP
}

# build_one BIN PKG LDFLAGS builds PKG of the pinned module (module, version,
# mod) into out/BIN-<version>/BIN with a .stamp naming what it was built
# from, unless the stamp matches, the binary is unchanged and the caller's
# `verify BINARY` accepts it; then links out/<link>/BIN to it. A new build
# that `verify` refuses is removed and stops the script, showing what the
# binary's `version` says (the caller's `expected` names what it wanted).
build_one() {
  local bin_name=$1 pkg=$2 ldflags=$3 dest bin stamp
  dest="$out/$bin_name-$version"
  bin="$dest/$bin_name"
  stamp=$(printf 'component %s\nversion %s\npackage %s\n' "$bin_name" "$version" "$pkg"; module_stamp "$ldflags")
  if [ "$force" = 0 ] && [ -x "$bin" ] && [ -f "$dest/.stamp" ] &&
    [ "$(cat "$dest/.stamp")" = "$stamp"$'\n'"sha256 $(sha256sum <"$bin" | cut -d' ' -f1)" ] &&
    verify "$bin"; then
    log "$bin_name $version up to date ($bin)"
  else
    mkdir -p "$dest"
    log "$bin_name $version … building $pkg in ${mod#"$root"/}"
    rm -f "$dest/.stamp"
    (cd "$mod" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin.tmp" "$pkg")
    if ! verify "$bin.tmp"; then
      echo "$name: $bin_name does not report \"$expected\"; it says:" >&2
      "$bin.tmp" version >&2 || true
      rm -f "$bin.tmp"
      exit 1
    fi
    mv -f "$bin.tmp" "$bin"
    printf '%s\nsha256 %s\n' "$stamp" "$(sha256sum <"$bin" | cut -d' ' -f1)" >"$dest/.stamp"
    log "$bin_name $version built in $(elapsed "$start") ($(du -h "$bin" | cut -f1))"
  fi
  mkdir -p "$out/$link"
  ln -sfn "../$bin_name-$version/$bin_name" "$out/$link/$bin_name"
  log "$bin_name $version ready in $out/$link/$bin_name after $(elapsed "$start")"
}
