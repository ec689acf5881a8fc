# Shared by the scripts that build one upstream release from a nested Go
# module pinned under tests/ (build-tofu.sh, build-cilium.sh): the niceness,
# the common options, logging, the proxy's go.mod and the cache lock.
# Source it after setting `name` (the script's name in messages) and
# `default_version`, and defining `usage`; then call pinned_build_args "$@".

# Long compiles must not starve whatever else runs on the machine: the caller
# runs `renice_self "$0" "$@"` first.
renice_self() {
  if [ "$(nice)" -lt 19 ]; then
    exec nice -n 19 "$@"
  fi
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
