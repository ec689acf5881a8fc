#!/usr/bin/env bash
# make demo: build kcore, check and explain the example manifests, then run a
# real single-replica controller on loopback and talk to it with kctl.
# Everything it makes lives in a temp dir that is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=$PWD/bin
PORT=${KCORE_DEMO_PORT:-17443}
work=$(mktemp -d -t kcore-demo.XXXXXX)
ctrl_pid=
cleanup() {
  [ -n "$ctrl_pid" ] && kill "$ctrl_pid" 2>/dev/null && wait "$ctrl_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export KCTL_CONFIG=$work/kctl-config

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold= plain=; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "Validate the example manifests (every error and warning, with file:line)"
run "$BIN/kctl" kubernetes validate -f examples/

step "A mistake points at its line and field"
cat > "$work/bad.yaml" <<'YAML'
kind: KubernetesCluster
metadata:
  name: lab
spec:
  clusterCidr: 10.244.0.0/16
  serviceCidr: 10.96.0.0/12
  apiServerEndpoint: 192.168.40.200:6443
  controlPlaneNodes:
    - nodeId: node-105
      advertiseAddress: 192.168.40.105
  scheduleOnControlPlane: true
  highAvailability:
    enabled: true
    vipAdress: 192.168.40.200
YAML
run "$BIN/kctl" kubernetes validate -f "$work/bad.yaml" || true

step "Explain a field from the schema"
run "$BIN/kctl" explain KubernetesCluster.spec.highAvailability

step "Create the controller's CA, certificates and a kctl context"
run "$BIN/kctl" controller init --name demo --controller "127.0.0.1:$PORT" --out "$work/pki"

step "Start a single-replica controller (Raft + bbolt, mutual TLS)"
printf '$ %s\n' "kcore-controller --pki-dir $work/pki/controller-0 --data-dir $work/data --listen 127.0.0.1:$PORT --bootstrap"
"$BIN/kcore-controller" --pki-dir "$work/pki/controller-0" --data-dir "$work/data" \
  --listen "127.0.0.1:$PORT" --bootstrap >"$work/controller.log" 2>&1 &
ctrl_pid=$!
for _ in $(seq 1 100); do
  "$BIN/kctl" controller members >/dev/null 2>&1 && break
  kill -0 "$ctrl_pid" 2>/dev/null || { cat "$work/controller.log"; exit 1; }
  sleep 0.1
done

step "Ask it who its members are"
run "$BIN/kctl" controller members

step "Plan the reference lab cluster against it (its nodes have not registered yet)"
run "$BIN/kctl" kubernetes plan -f examples/reference/cluster.yaml || true

step "Every change is audited"
run "$BIN/kctl" audit

printf '\nDemo done. The controller log was:\n'
tail -n 5 "$work/controller.log"
