#!/usr/bin/env bash
# The lab's image registry: Debian's docker-registry (CNCF distribution) over
# TLS with a CA of its own, holding the images scripts/build-images.sh built.
#
#   scripts/lab-registry.sh start DIR HOST:PORT   make DIR/pki (a CA and a server
#                                                 certificate for HOST), start the
#                                                 registry, wait until it answers
#   scripts/lab-registry.sh push DIR HOST:PORT [SET]
#                                                 push every built image of SET
#                                                 (lab, the default, conformance or cilium:
#                                                 scripts/build-images.sh --set) into it
#   scripts/lab-registry.sh stop DIR              stop it
#
# DIR holds everything: pki/ca.crt (the CA a client trusts; containerd's
# hosts.toml names it), pki/server.{crt,key}, config.yml, data/ (the
# registry's storage), registry.log and registry.pid. HOST must be an IP
# address; the certificate names exactly it. The CA key never leaves DIR/pki
# and is made once per DIR, so a restart keeps the CA clients already trust.
#
# Images are stored under their repository path without the registry host
# (registry.k8s.io/pause:3.10 as pause:3.10, docker.io/library/busybox:1.35.0
# as library/busybox:1.35.0): where a containerd mirror for registry.k8s.io
# or docker.io whose endpoint is https://HOST:PORT asks for them.
#
# Environment: KCORE_CACHE (default ~/.cache/kcore): the images are read from
# $KCORE_CACHE/images, pushed with $KCORE_CACHE/images/bin/kcore-images (the
# conformance set's from $KCORE_CACHE/images/conformance, pinned by
# tests/conformance/images.go; the cilium set's from $KCORE_CACHE/images/cilium,
# pinned by tests/cilium/images.go).
set -euo pipefail

CACHE=${KCORE_CACHE:-$HOME/.cache/kcore}
IMAGES=$CACHE/images
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Seconds the registry may take to answer after it starts.
START_TIMEOUT=20
# Days the lab CA and the server certificate are valid.
CERT_DAYS=30

die() { echo "lab-registry: $*" >&2; exit 1; }

usage() { echo "usage: scripts/lab-registry.sh start DIR HOST:PORT | push DIR HOST:PORT [lab|conformance|cilium] | stop DIR" >&2; exit 2; }

parse_addr() {
  [[ $1 =~ ^([0-9]+\.[0-9]+\.[0-9]+\.[0-9]+):([0-9]+)$ ]] || die "address must be IPv4:PORT, got $1"
  HOST=${BASH_REMATCH[1]}
  PORT=${BASH_REMATCH[2]}
}

# pki DIR HOST: the CA (once) and a server certificate for HOST.
pki() {
  local d=$1/pki host=$2
  mkdir -p "$d"
  chmod 700 "$d"
  if [ ! -s "$d/ca.key" ] || [ ! -s "$d/ca.crt" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$CERT_DAYS" \
      -subj "/CN=kcore lab registry CA" \
      -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  fi
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -subj "/CN=kcore lab registry" -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days "$CERT_DAYS" -out "$d/server.crt" -extfile <(printf '%s\n' \
      "subjectAltName=IP:$host" "extendedKeyUsage=serverAuth" \
      "keyUsage=critical,digitalSignature" "basicConstraints=critical,CA:FALSE") 2>/dev/null
  rm -f "$d/server.csr"
  chmod 600 "$d/ca.key" "$d/server.key"
}

config() {
  local dir=$1 addr=$2
  cat <<EOF
# The kcore lab's registry (scripts/lab-registry.sh); its data lives here.
version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: false
http:
  addr: $addr
  tls:
    certificate: $dir/pki/server.crt
    key: $dir/pki/server.key
EOF
}

answers() {
  curl -fsS --noproxy '*' --max-time 2 --cacert "$1/pki/ca.crt" "https://$2/v2/" >/dev/null 2>&1
}

start() {
  local dir=$1 addr=$2 t0
  parse_addr "$addr"
  command -v docker-registry >/dev/null || die "docker-registry is not installed (scripts/deps.sh installs Debian's docker-registry)"
  if [ -f "$dir/registry.pid" ] && kill -0 "$(cat "$dir/registry.pid")" 2>/dev/null; then
    die "a registry already runs from $dir (pid $(cat "$dir/registry.pid"))"
  fi
  mkdir -p "$dir/data"
  pki "$dir" "$HOST"
  config "$dir" "$addr" >"$dir/config.yml"
  setsid docker-registry serve "$dir/config.yml" >"$dir/registry.log" 2>&1 </dev/null &
  echo $! >"$dir/registry.pid"
  t0=$SECONDS
  until answers "$dir" "$addr"; do
    kill -0 "$(cat "$dir/registry.pid")" 2>/dev/null || die "docker-registry exited; see $dir/registry.log"
    (( SECONDS - t0 < START_TIMEOUT )) || die "docker-registry did not answer on https://$addr within ${START_TIMEOUT}s; see $dir/registry.log"
    sleep 0.2
  done
  echo "lab-registry: https://$addr (pid $(cat "$dir/registry.pid"), CA $dir/pki/ca.crt)" >&2
}

push() {
  local dir=$1 addr=$2 set=${3:-lab} images=$IMAGES pins=$REPO/manifests/images.go
  parse_addr "$addr"
  case "$set" in
    lab) ;;
    conformance) images=$IMAGES/conformance pins=$REPO/tests/conformance/images.go ;;
    cilium) images=$IMAGES/cilium pins=$REPO/tests/cilium/images.go ;;
    *) usage ;;
  esac
  [ -x "$images/bin/kcore-images" ] || die "no images in $images: run scripts/build-images.sh --set $set"
  "$images/bin/kcore-images" push -set "$set" -images "$pins" -out "$images" -registry "$addr" -ca "$dir/pki/ca.crt"
}

stop() {
  local dir=$1 pid t0
  [ -f "$dir/registry.pid" ] || return 0
  pid=$(cat "$dir/registry.pid")
  if kill -TERM "$pid" 2>/dev/null; then
    t0=$SECONDS
    while kill -0 "$pid" 2>/dev/null; do
      if (( SECONDS - t0 >= 10 )); then
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.2
    done
  fi
  rm -f "$dir/registry.pid"
}

case "${1:-}" in
  start) [ $# -eq 3 ] || usage; start "$2" "$3" ;;
  push) [ $# -eq 3 ] || [ $# -eq 4 ] || usage; push "$2" "$3" "${4:-}" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
