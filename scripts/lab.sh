#!/usr/bin/env bash
# kcore lab: a real, highly available Kubernetes control plane on one machine.
#
#   scripts/lab.sh up      (make lab)       build what is missing, create the lab, apply, wait
#   scripts/lab.sh down    (make lab-down)  remove every namespace, process, link and file it made
#   scripts/lab.sh stop    (make lab-stop)  power the lab off: kill every process at once,
#                                           keep its state (an outage, a weekend)
#   scripts/lab.sh start   (make lab-start) power it on again and wait until the cluster is ready
#   scripts/lab.sh status                   what is running
#   scripts/lab.sh machine-up cN...         add machines with mounts of their own; it returns
#                                           once each agent reported its heartbeat and facts
#   scripts/lab.sh machine-down cN...       remove them (their clusters deleted first)
#   scripts/lab.sh machine-stop cN...       pull their plug: kill every process on them
#   scripts/lab.sh machine-start cN...      power them on again (their agent restarts the rest)
#   scripts/lab.sh manifest FILE            print FILE with the lab registry's CA in its mirrors
#
# Layout (every address exists only inside the lab):
#   bridge kcore-lab0 10.77.0.1/24 on the host; network namespaces kcore-lab-n1..n3
#   (eth0 10.77.0.11-13/24, veth kcl-n1..n3 on the bridge); the API VIP 10.77.0.100
#   held by keepalived on the namespaces' eth0.
#   Three kcore-controller replicas on the host, on the bridge address
#   10.77.0.1:7443/7445/7447 (raft on port + 1), rendering with --render-profile lab.
#   Per node, inside its namespace (and a UTS namespace whose hostname is the
#   node id): kcore-node-agent --runtime supervisor --root
#   LAB/nN, which runs the rendered units from the built binaries: containerd
#   (kcore-containerd, its config, root, state, socket and registry hosts under
#   the node's root), etcd, kube-apiserver, kube-controller-manager,
#   kube-scheduler, kubelet, kube-proxy and keepalived. The agent's PATH starts
#   with the cache's current/ so containerd finds the containerd-shim-runc-v2
#   built with it before any other on the host.
#   An image registry (Debian's docker-registry) on the host at 10.77.0.1:5000,
#   TLS with a lab CA, holding the images scripts/build-images.sh built; the
#   manifest's spec.registryMirrors send registry.k8s.io and docker.io pulls to
#   it, and lab.sh applies a copy of the manifest carrying the lab CA as their
#   caPem (scripts/lab-registry.sh; nothing is pulled from the internet).
#
# Machines cN (machine-up; eth0 10.77.0.2N/24, veth kcl-cN, namespace
# kcore-lab-cN) also get a mount namespace of their own, as separate machines
# have: their agent, containerd and pods see a bpffs of their own at
# /sys/fs/bpf, a tmpfs at /run/cilium holding their own cgroup2 root at
# /run/cilium/cgroupv2 (a child of the host's cgroup2 hierarchy, the agent
# moved into it), and the machine's own LAB/cN/etc/cni/net.d and
# LAB/cN/opt/cni/bin at /etc/cni/net.d and /opt/cni/bin. Cilium's DaemonSet
# mounts those host paths, so several Cilium agents on this one kernel keep
# apart. The namespace is a slave of the host's (the host's mounts still
# reach the machine, the machine's stay in it) and shared inside, as
# kubelet's Bidirectional mounts need.
#
# Environment:
#   KCORE_LAB_DIR   lab directory (default /var/lib/kcore-lab)
#   KCORE_CACHE     cache of the Kubernetes and containerd binaries and the images (default ~/.cache/kcore)
#   KCORE_BIN_DIR   where kctl, kcore-controller and kcore-node-agent are (default bin/)
#   KEEP=1          on failure, keep the lab up for inspection (default: remove it)
#   KCORE_LAB_BUILT=1 the caller has just checked the binaries and images against
#                   their stamps (make e2e does, once, before the lab tests): skip
#                   that check, which takes about 10 s each time
#   LAB_MANIFEST    cluster manifest (default examples/lab/cluster.yaml)
#   LAB_TIMEOUT     seconds kctl kubernetes apply --wait may take (default 900)
#   LAB_NODE_TIMEOUT seconds to wait for every node to be Ready (default 300)
#   LAB_NODES=N     namespaces to create, 3 to 9 (default 3); the manifest uses
#                   n1..n3, the others register and wait for a scale-out
#   LAB_DISK_MIB    size of each node's raw disk, 320 to 4096 MiB (default 512): a
#                   sparse file LAB/disks/nN.img on a loop device, linked as
#                   LAB/nN/dev/disk/by-id/kcore-lab-disk-nN (the agent's by-id
#                   directory under its --root); the manifest's disk volumes use it
#   LAB_APPLY=0     stop once the controllers and agents are up, before the apply
#                   (the e2e tests drive the apply themselves)
#   LAB_WORKLOAD_CHECK=0 skip the workload check after the apply (one pod of
#                   the echo image resolving two Services through CoreDNS)
#   LAB_LEAF_VALIDITY lifetime of the leaf certificates the controllers issue,
#                   passed as --leaf-validity (a Go duration of h/m/s, 3m at
#                   least; default: the controller's, one year). Every leaf
#                   renews at two thirds of it, so 3m sees a renewal every
#                   2m.
#   LAB_K8S_VERSION Kubernetes release new clusters run (default: the release of
#                   $KCORE_CACHE/bin/current). Each agent gets --releases-dir
#                   $KCORE_LAB_DIR/<node>/releases with one link per release built
#                   in the cache (current, and e.g. v1.36.3 from
#                   scripts/build-k8s.sh --k8s-version v1.36.3 --link v1.36.3),
#                   so a ClusterUpdate switches binaries per node.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB=${KCORE_LAB_DIR:-/var/lib/kcore-lab}
CACHE=${KCORE_CACHE:-$HOME/.cache/kcore}
K8SBIN=$CACHE/bin/current
KBIN=${KCORE_BIN_DIR:-$REPO/bin}
MANIFEST=${LAB_MANIFEST:-$REPO/examples/lab/cluster.yaml}
APPLY_TIMEOUT=${LAB_TIMEOUT:-900}
NODE_TIMEOUT=${LAB_NODE_TIMEOUT:-300}
KEEP=${KEEP:-0}
APPLY=${LAB_APPLY:-1}
WORKLOAD_CHECK=${LAB_WORKLOAD_CHECK:-1}
DISK_MIB=${LAB_DISK_MIB:-512}
LEAF_VALIDITY=${LAB_LEAF_VALIDITY:-}
[ -z "$LEAF_VALIDITY" ] || [[ "$LEAF_VALIDITY" =~ ^([0-9]+[hms])+$ ]] || { echo "LAB_LEAF_VALIDITY must be a duration such as 3m or 1h30m" >&2; exit 2; }
[[ "$DISK_MIB" =~ ^[0-9]+$ ]] && ((DISK_MIB >= 320 && DISK_MIB <= 4096)) || { echo "LAB_DISK_MIB must be 320 to 4096 (mkfs.xfs needs 300 MiB)" >&2; exit 2; }

BRIDGE=kcore-lab0
HOST_ADDR=10.77.0.1
PREFIX=24
NODE_COUNT=${LAB_NODES:-3}
[[ "$NODE_COUNT" =~ ^[3-9]$ ]] || { echo "LAB_NODES must be 3 to 9" >&2; exit 2; }
# node_addr NODE: the node's eth0 address (nN 10.77.0.1N, cN 10.77.0.2N).
node_addr() {
  case "$1" in
    c*) echo "10.77.0.2${1#c}" ;;
    *) echo "10.77.0.1${1#n}" ;;
  esac
}
# own_mounts NODE: whether the machine has a mount namespace of its own.
own_mounts() { [[ $1 == c* ]]; }
NODES=()
declare -A NODE_ADDR=()
for ((i = 1; i <= NODE_COUNT; i++)); do
  NODES+=("n$i")
  NODE_ADDR[n$i]=$(node_addr "n$i")
done
VIP=10.77.0.100
API_PORT=6444
CONTROLLER_PORTS=(7443 7445 7447)
CLUSTER=lab
CONTEXT=kcore-lab
REGISTRY_ADDR=$HOST_ADDR:5000
REGISTRY_DIR=$LAB/registry

export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
export KCTL_CONFIG=$LAB/kctl.yaml

START=$(date +%s)
say() { printf '[lab %4ss] %s\n' "$(($(date +%s) - START))" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
ns() { echo "kcore-lab-$1"; }
nodeid() { echo "lab-$1"; }

# wait_for DESC SECONDS CMD...: run CMD every second until it succeeds or
# SECONDS pass (then fail, naming DESC).
wait_for() {
  local desc=$1 secs=$2 t0
  shift 2
  t0=$(date +%s)
  say "waiting for $desc (up to ${secs}s)"
  until "$@" >/dev/null 2>&1; do
    if (($(date +%s) - t0 >= secs)); then
      die "timed out after ${secs}s waiting for $desc"
    fi
    sleep 1
  done
  say "$desc: ok after $(($(date +%s) - t0))s"
}

need_root() { [ "$(id -u)" -eq 0 ] || die "the lab needs root (network namespaces, bridges); run it as root"; }

# deps installs the Debian packages the lab runs, when missing.
deps() {
  declare -A want=(
    [ip]=iproute2 [keepalived]=keepalived [curl]=curl [nft]=nftables
    [runc]=runc [iptables]=iptables [conntrack]=conntrack
    [docker-registry]=docker-registry [openssl]=openssl [gcc]=gcc
  )
  local missing=() bin
  for bin in "${!want[@]}"; do
    command -v "$bin" >/dev/null 2>&1 || missing+=("${want[$bin]}")
  done
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  [ -f /usr/lib/x86_64-linux-gnu/libc.a ] || missing+=(libc6-dev)
  dpkg-query -W -f '${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing+=(busybox-static)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    say "installed ${missing[*]}"
  fi
}

binaries() {
  if [ ! -x "$KBIN/kctl" ] || [ ! -x "$KBIN/kcore-controller" ] || [ ! -x "$KBIN/kcore-node-agent" ]; then
    say "building kctl, kcore-controller and kcore-node-agent into $KBIN"
    (cd "$REPO" && go build -o "$KBIN/" ./cmd/kctl ./cmd/kcore-controller ./cmd/kcore-node-agent)
  fi
  local b absent=0
  for b in etcd etcdctl kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl containerd containerd-shim-runc-v2; do
    [ -x "$K8SBIN/$b" ] || absent=1
  done
  if [ "$absent" -eq 1 ]; then
    say "building the etcd, Kubernetes and containerd binaries into $CACHE/bin (a cold build takes 10-15 minutes)"
    "$REPO/scripts/build-k8s.sh" >&2
  elif [ "${KCORE_LAB_BUILT:-0}" = 1 ]; then
    say "KCORE_LAB_BUILT=1: the binaries and images in $CACHE were just checked against their stamps"
  else
    say "checking the etcd, Kubernetes and containerd binaries in $CACHE/bin against their stamps"
    "$REPO/scripts/build-k8s.sh" >&2
  fi
  CURRENT_VERSION=$("$K8SBIN/kube-apiserver" --version | awk '{print $2}')
  K8S_VERSION=${LAB_K8S_VERSION:-$CURRENT_VERSION}
  if [ "$K8S_VERSION" != "$CURRENT_VERSION" ] && [ ! -x "$CACHE/bin/$K8S_VERSION/kube-apiserver" ]; then
    echo "LAB_K8S_VERSION=$K8S_VERSION is not built: scripts/build-k8s.sh --k8s-version $K8S_VERSION --link $K8S_VERSION" >&2
    exit 2
  fi
  if [ "${KCORE_LAB_BUILT:-0}" != 1 ] || [ "$absent" -eq 1 ]; then
    say "checking the lab images in $CACHE/images (scripts/build-images.sh; the first build compiles CoreDNS, the longest step)"
    "$REPO/scripts/build-images.sh" >&2
  fi
  say "binaries: $("$K8SBIN/kube-apiserver" --version), etcd $("$K8SBIN/etcd" --version | awk 'NR==1{print $3}'), containerd $("$K8SBIN/containerd" --version | awk '{print $3}'), $("$KBIN/kctl" version 2>/dev/null | head -1)"
}

kctl() { "$KBIN/kctl" "$@"; }
kubectl() { "$K8SBIN/kubectl" --kubeconfig "$LAB/n1/etc/kubernetes/admin.conf" "$@"; }

network() {
  say "network: bridge $BRIDGE $HOST_ADDR/$PREFIX, namespaces ${NODES[*]/#/kcore-lab-}"
  ip link add "$BRIDGE" type bridge
  ip addr add "$HOST_ADDR/$PREFIX" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  local n
  for n in "${NODES[@]}"; do
    ip netns add "$(ns "$n")"
    ip link add "kcl-$n" type veth peer name eth0 netns "$(ns "$n")"
    ip link set "kcl-$n" master "$BRIDGE" up
    ip -n "$(ns "$n")" addr add "${NODE_ADDR[$n]}/$PREFIX" dev eth0
    ip -n "$(ns "$n")" link set lo up
    ip -n "$(ns "$n")" link set eth0 up
  done
  for n in "${NODES[@]}"; do
    wait_for "link kcl-$n up" 20 links_up "$n"
  done
}

links_up() {
  grep -qx up "/sys/class/net/kcl-$1/operstate" &&
    ip netns exec "$(ns "$1")" grep -qx up /sys/class/net/eth0/operstate
}

controllers() {
  local args=() leaf=() i p
  for p in "${CONTROLLER_PORTS[@]}"; do args+=(--controller "$HOST_ADDR:$p"); done
  [ -z "$LEAF_VALIDITY" ] || leaf=(--leaf-validity "$LEAF_VALIDITY")
  say "controllers: kctl controller init (context $CONTEXT in $KCTL_CONFIG)"
  kctl controller init --name "$CONTEXT" "${args[@]}" --out "$LAB/pki" >"$LAB/log/controller-init.log"
  for i in 0 1 2; do
    local join=(--join "$HOST_ADDR:${CONTROLLER_PORTS[0]}")
    [ "$i" -eq 0 ] && join=(--bootstrap)
    mkdir -p "$LAB/controller-$i"
    # What the replica runs with, kept for start: a restarted replica needs
    # neither --bootstrap nor --join (its data dir remembers the cluster).
    printf '%s\0' --pki-dir "$LAB/pki/controller-$i" --data-dir "$LAB/controller-$i" \
      --listen "$HOST_ADDR:${CONTROLLER_PORTS[$i]}" \
      --render-profile lab --health-interval 10s --kubernetes-version "$K8S_VERSION" "${leaf[@]}" \
      >"$LAB/run/controller-$i.args"
    controller_start "$i" "${join[@]}"
    if [ "$i" -eq 0 ]; then
      wait_for "controller-0 to lead" 60 kctl controller members
    fi
  done
  wait_for "three controller replicas" 90 three_members
}

# controller_start I [FLAG...]: start replica I with the arguments
# controllers saved for it, plus FLAG (--bootstrap or --join on first start).
controller_start() {
  local i=$1 args
  shift
  mapfile -d '' -t args <"$LAB/run/controller-$i.args"
  setsid "$KBIN/kcore-controller" "${args[@]}" "$@" >>"$LAB/log/controller-$i.log" 2>&1 </dev/null &
  echo $! >"$LAB/run/controller-$i.pid"
  say "controller-$i: pid $! on $HOST_ADDR:${CONTROLLER_PORTS[$i]} (log $LAB/log/controller-$i.log)"
}

three_members() {
  local out
  out=$(kctl controller members -o json)
  [ "$(grep -c '"suffrage": "voter"' <<<"$out")" -ge 3 ]
}

# registry starts the lab registry on the bridge address, pushes every built
# image into it, and points MANIFEST at a copy of the manifest whose mirrors
# of the lab registry carry its CA (the CA is made per lab, so no committed
# manifest can hold it).
registry() {
  say "registry: https://$REGISTRY_ADDR (data in $REGISTRY_DIR/data, CA $REGISTRY_DIR/pki/ca.crt)"
  "$REPO/scripts/lab-registry.sh" start "$REGISTRY_DIR" "$REGISTRY_ADDR"
  "$REPO/scripts/lab-registry.sh" push "$REGISTRY_DIR" "$REGISTRY_ADDR"
  with_lab_ca "$MANIFEST" >"$LAB/cluster.yaml"
  MANIFEST=$LAB/cluster.yaml
}

# with_lab_ca FILE prints the manifest FILE with the lab registry's CA as
# the caPem of every mirror entry whose endpoint is the lab registry.
with_lab_ca() {
  [ -f "$REGISTRY_DIR/pki/ca.crt" ] || die "no lab registry CA in $REGISTRY_DIR/pki (make lab first)"
  awk -v ep="endpoints: [https://$REGISTRY_ADDR]" -v ca="$REGISTRY_DIR/pki/ca.crt" '
    { print }
    index($0, ep) {
      pad = substr($0, 1, index($0, ep) - 1)
      print pad "caPem: |"
      while ((getline l < ca) > 0) print pad "  " l
      close(ca)
    }' "$1"
}

# releases NODE_ROOT: one link per release in the cache, the directory a
# unit pinned to that release runs its binaries from.
releases() {
  local r=$1 d
  mkdir -p "$r/releases"
  ln -sfn "$K8SBIN" "$r/releases/$CURRENT_VERSION"
  for d in "$CACHE"/bin/v*; do
    [ -d "$d" ] && [ -x "$d/kube-apiserver" ] && ln -sfn "$d" "$r/releases/$(basename "$d")"
  done
  return 0
}

node_up() {
  local n=$1 r=$LAB/$1 tok
  releases "$r"
  # Cilium's chart where a package would install it (the node's agent
  # looks under its root): the cache's, built with Cilium's binaries.
  if [ -d "$K8SBIN/cilium-chart" ]; then
    mkdir -p "$r${CILIUM_CHART_DIR%/*}"
    ln -sfn "$K8SBIN/cilium-chart" "$r$CILIUM_CHART_DIR"
  fi
  # A token is bound to one node id and registers it once: a node that
  # already holds its certificate needs none.
  if [ ! -s "$r/var/lib/kcore/agent/node.crt" ]; then
    tok=$(kctl node token create --node "$(nodeid "$n")" --ttl 30m --ca-out "$LAB/controller-ca.crt")
    tok=${tok%%$'\n'*}
    printf '%s\n' "$tok" >"$LAB/run/token-$n"
    chmod 600 "$LAB/run/token-$n"
  fi
  local ctl=() p
  for p in "${CONTROLLER_PORTS[@]}"; do ctl+=(--controller "$HOST_ADDR:$p"); done
  # containerd (the agent's kcore-containerd unit, from --bin-dir) looks its
  # shim up on PATH first: the one built with it, not a distribution's; the
  # etcd backup unit runs the agent's own binary, found on PATH. The
  # agent and what it starts get a UTS namespace of their own named for the
  # node, as a machine has its own hostname (kube-apiserver names its
  # identity lease after it).
  local enter=(unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' sh "$(nodeid "$n")")
  if own_mounts "$n"; then
    mkdir -p /run/cilium /etc/cni/net.d /opt/cni/bin "$r/etc/cni/net.d" "$r/opt/cni/bin" "$CGROUP2/$(ns "$n")"
    enter=(unshare --uts --mount --propagation slave sh -c "$OWN_MOUNTS" sh "$(nodeid "$n")" "$r" "$CGROUP2/$(ns "$n")")
  fi
  in_ns "$n" "${enter[@]}" \
    env PATH="$K8SBIN:$KBIN:$PATH" setsid "$KBIN/kcore-node-agent" --node-id "$(nodeid "$n")" "${ctl[@]}" \
    --join-token-file "$LAB/run/token-$n" --ca-file "$LAB/controller-ca.crt" \
    --root "$r" --runtime supervisor --bin-dir "$K8SBIN" --releases-dir "$r/releases" \
    >"$LAB/log/agent-$n.log" 2>&1 </dev/null &
  echo $! >"$LAB/run/agent-$n.pid"
  say "node $(nodeid "$n"): agent pid $! in $(ns "$n"), root $r (it starts containerd, log $r/var/log/kcore/kcore-containerd.log)"
}

# The host's cgroup2 hierarchy: a machine with mounts of its own gets a
# child of it as its cgroup2 root.
CGROUP2=/sys/fs/cgroup/unified
# OWN_MOUNTS is the start of a machine with mounts of its own, run by sh in
# its new mount namespace with the hostname, the machine's root and its
# cgroup2 directory, then the command to run.
OWN_MOUNTS='hostname "$1" && r=$2 && cg=$3 && shift 3 &&
  mount --make-rshared / &&
  mount -t bpf bpf /sys/fs/bpf &&
  mount -t tmpfs -o mode=0755 tmpfs /run/cilium &&
  mkdir -p /run/cilium/cgroupv2 &&
  echo $$ >"$cg/cgroup.procs" &&
  mount --bind "$cg" /run/cilium/cgroupv2 &&
  mount --bind "$r/etc/cni/net.d" /etc/cni/net.d &&
  mount --bind "$r/opt/cni/bin" /opt/cni/bin &&
  exec "$@"'

# CILIUM_CHART_DIR is where a node's Cilium oneshot finds Cilium's chart,
# under the node's root (render.CiliumChartDir, which pkg/render's tests hold
# this line to).
CILIUM_CHART_DIR=/usr/share/kcore/charts/cilium

# machine_up NODE...: add machines with mounts of their own to a running lab.
# It returns once each agent is ready and reported its facts with its
# address, so a plan naming them right after sees them as they are.
machine_up() {
  need_root
  [ -e "$LAB/.kcore-lab" ] || die "no lab at $LAB (make lab first)"
  [ -d "$CGROUP2" ] || die "no cgroup2 hierarchy at $CGROUP2"
  CURRENT_VERSION=$("$K8SBIN/kube-apiserver" --version | awk '{print $2}')
  local n
  for n in "$@"; do
    [[ $n =~ ^c[1-9]$ ]] || die "machine names are c1 to c9, got $n"
    ! ip netns list | grep -qw "$(ns "$n")" || die "machine $n exists"
  done
  for n in "$@"; do
    ip netns add "$(ns "$n")"
    ip link add "kcl-$n" type veth peer name eth0 netns "$(ns "$n")"
    ip link set "kcl-$n" master "$BRIDGE" up
    ip -n "$(ns "$n")" addr add "$(node_addr "$n")/$PREFIX" dev eth0
    ip -n "$(ns "$n")" link set lo up
    ip -n "$(ns "$n")" link set eth0 up
    wait_for "link kcl-$n up" 20 links_up "$n"
    node_up "$n"
  done
  for n in "$@"; do wait_for "agent $(nodeid "$n") to join" 60 agent_joined "$n"; done
  for n in "$@"; do wait_for "agent $(nodeid "$n")'s heartbeat and facts" 60 agent_reported "$n"; done
}

# machine_down NODE...: remove machines machine_up added, with everything
# running on them (delete their clusters first: this is pulling the plug).
machine_down() {
  need_root
  local n
  for n in "$@"; do
    [[ $n =~ ^c[1-9]$ ]] || die "machine names are c1 to c9, got $n"
    MACHINE="$(ns "$n")" kill_all machine_only_pids || die "could not stop every process of $n"
    ip netns del "$(ns "$n")" 2>/dev/null || true
    ip link del "kcl-$n" 2>/dev/null || true
    rmdir "$CGROUP2/$(ns "$n")" 2>/dev/null || true
    rm -rf "${LAB:?}/$n"
    say "machine $(nodeid "$n") removed"
  done
}

# machine_stop NODE...: cut the power of machines machine_up added: every
# process on them killed at once, their mounts gone with their mount
# namespace, what keepalived added to eth0 removed; their disk state stays.
machine_stop() {
  need_root
  local n a
  for n in "$@"; do
    [[ $n =~ ^c[1-9]$ ]] || die "machine names are c1 to c9, got $n"
    MACHINE="$(ns "$n")" kill_all machine_only_pids || die "could not stop every process of $n"
    rm -rf "${LAB:?}/$n/run"
    for a in $(ip -n "$(ns "$n")" -4 -o addr show dev eth0 | awk '{print $4}'); do
      [ "${a%/*}" = "$(node_addr "$n")" ] || ip -n "$(ns "$n")" addr del "$a" dev eth0 2>/dev/null || true
    done
    say "machine $(nodeid "$n") stopped"
  done
}

# machine_start NODE...: power stopped machines on again.
machine_start() {
  need_root
  CURRENT_VERSION=$("$K8SBIN/kube-apiserver" --version | awk '{print $2}')
  local n
  for n in "$@"; do
    [[ $n =~ ^c[1-9]$ ]] || die "machine names are c1 to c9, got $n"
    [ -z "$(ip netns pids "$(ns "$n")" 2>/dev/null)" ] || die "machine $n is running"
    node_up "$n"
  done
}

# disk_id NODE: the by-id name of the node's raw disk.
disk_id() { echo "kcore-lab-disk-$1"; }

# disk_up NODE: attach a sparse LAB/disks/NODE.img as a loop device and link
# it where the node's agent resolves /dev/disk/by-id names (its --root), as
# udev links a real disk; the device's sysfs entry is linked too, so the
# agent's facts report its size.
disk_up() {
  local n=$1 r=$LAB/$1 img=$LAB/disks/$1.img dev
  mkdir -p "$LAB/disks" "$r/dev/disk/by-id" "$r/sys/class/block"
  truncate -s "${DISK_MIB}M" "$img"
  dev=$(losetup --find --show "$img") || die "no free loop device for $(nodeid "$n")'s disk"
  ln -sfn "$dev" "$r/dev/disk/by-id/$(disk_id "$n")"
  ln -sfn "/sys/class/block/${dev#/dev/}" "$r/sys/class/block/${dev#/dev/}"
  say "node $(nodeid "$n"): disk $(disk_id "$n") is $dev (${DISK_MIB} MiB, sparse $img)"
}

# disks_down detaches every loop device backed by a file in LAB/disks (its
# mounts are gone by then), including any a failed run left behind.
disks_down() {
  local img dev
  for img in "$LAB"/disks/*.img; do
    [ -f "$img" ] || continue
    for dev in $(losetup -n -O NAME -j "$img" 2>/dev/null); do
      umount "$dev" 2>/dev/null || true
      losetup -d "$dev" 2>/dev/null || say "could not detach $dev ($img)"
    done
  done
  return 0
}

# in_ns NODE CMD...: run CMD in the node's network namespace only. Unlike
# `ip netns exec`, nsenter keeps the host's mounts, so /sys/fs/cgroup stays
# visible to kubelet and containerd.
in_ns() {
  local n=$1
  shift
  nsenter --net="/run/netns/$(ns "$n")" "$@"
}

agent_joined() { [ -s "$LAB/$1/var/lib/kcore/agent/node.crt" ]; }

# agent_reported N: the controller has node N ready, with its address among
# its facts.
agent_reported() {
  local out
  out=$(kctl node get "$(nodeid "$1")" -o json 2>/dev/null) || return 1
  grep -q '"ready": true' <<<"$out" && grep -qF "\"$(node_addr "$1")\"" <<<"$out"
}

ready_nodes() {
  local members
  members=$(grep -c 'advertiseAddress:' "$MANIFEST") # one per member; volumes name nodes too
  [ "$(kubectl get nodes --no-headers 2>/dev/null | awk '$2=="Ready"' | wc -l)" -ge "$members" ]
}

# HOST_DIRS are host paths kubelet uses whatever its --root-dir (the device
# plugin socket directory, pod and container log directories). The lab
# records those that did not exist before it, and down removes only those.
HOST_DIRS=(/var/lib/kubelet /var/lib/kubelet/device-plugins /var/log/pods /var/log/containers
  /run/cilium /etc/cni /etc/cni/net.d /opt/cni /opt/cni/bin)

host_dirs_note() {
  local d
  for d in "${HOST_DIRS[@]}"; do
    [ -e "$d" ] || echo "$d" >>"$LAB/host-dirs"
  done
  return 0
}

host_dirs_remove() {
  [ -f "$LAB/host-dirs" ] || return 0
  local d
  # Children were noted after their parents: remove them first.
  while read -r d; do
    case "$d" in
      /var/lib/kubelet | /var/lib/kubelet/device-plugins | /var/log/pods | /var/log/containers) rm -rf "$d" ;;
      /run/cilium | /etc/cni | /etc/cni/net.d | /opt/cni | /opt/cni/bin) rmdir "$d" 2>/dev/null || true ;;
    esac
  done < <(tac "$LAB/host-dirs")
}

on_error() {
  local rc=$?
  trap - ERR EXIT
  [ "$rc" -eq 0 ] && return
  say "the lab failed (exit $rc); logs are in $LAB/log and $LAB/nN/var/log/kcore"
  if [ "$KEEP" = 1 ]; then
    say "KEEP=1: the lab stays up for inspection; remove it with 'make lab-down'"
  else
    say "removing the lab (set KEEP=1 to keep it for inspection)"
    down
  fi
  exit "$rc"
}

up() {
  need_root
  if [ -e "$LAB" ] || ip link show "$BRIDGE" >/dev/null 2>&1; then
    say "a previous lab exists: removing it first"
    down
  fi
  deps
  binaries
  kctl kubernetes validate -f "$MANIFEST" >&2 || die "the manifest $MANIFEST is not valid"
  trap on_error ERR EXIT
  mkdir -p "$LAB/log" "$LAB/run"
  echo "kcore lab; remove with scripts/lab.sh down" >"$LAB/.kcore-lab"
  host_dirs_note
  network
  registry
  controllers
  local n
  for n in "${NODES[@]}"; do disk_up "$n"; done
  for n in "${NODES[@]}"; do node_up "$n"; done
  for n in "${NODES[@]}"; do wait_for "agent $(nodeid "$n") to join" 60 agent_joined "$n"; done
  wait_for "every agent's heartbeat and facts (a plan without blocking issues)" 90 kctl kubernetes plan -f "$MANIFEST"
  if [ "$APPLY" = 0 ]; then
    trap - ERR EXIT
    say "LAB_APPLY=0: controllers and agents are up; apply with: KCTL_CONFIG=$KCTL_CONFIG $KBIN/kctl kubernetes apply --yes --wait -f $MANIFEST"
    return
  fi
  say "kctl kubernetes apply --yes --wait -f ${MANIFEST#"$REPO"/}"
  local t0 t1
  t0=$(date +%s)
  if ! kctl kubernetes apply --yes --wait --timeout "${APPLY_TIMEOUT}s" -f "$MANIFEST"; then
    # --wait stops at the first degraded phase. During bootstrap that is often
    # a task that ran before the VIP answered (the add-ons task talks to the
    # API through the VIP); the agent retries failed items, so follow the
    # cluster a while longer, and say so.
    say "apply --wait stopped before ready (see above); following the cluster while the agents retry"
    wait_for "cluster $CLUSTER ready (kctl kubernetes health)" "$APPLY_TIMEOUT" kctl kubernetes health "$CLUSTER"
  fi
  t1=$(date +%s)
  say "cluster $CLUSTER ready $((t1 - t0))s after apply"
  kctl kubernetes health "$CLUSTER"
  say "kubectl get --raw /readyz through the VIP $VIP:$API_PORT"
  kubectl get --raw /readyz
  echo
  wait_for "every node Ready in kubectl get nodes" "$NODE_TIMEOUT" ready_nodes
  local t2
  t2=$(date +%s)
  kubectl get nodes -o wide
  "$K8SBIN/etcdctl" --endpoints "https://${NODE_ADDR[n1]}:2379" \
    --cacert "$LAB/n1/etc/kubernetes/pki/etcd/ca.crt" \
    --cert "$LAB/n1/etc/kubernetes/pki/apiserver-etcd-client.crt" \
    --key "$LAB/n1/etc/kubernetes/pki/apiserver-etcd-client.key" member list -w table
  if [ "$WORKLOAD_CHECK" = 1 ]; then workload_check; fi
  trap - ERR EXIT
  cat <<EOF

The lab is up.
  apply -> ready:        $((t1 - t0))s
  apply -> nodes Ready:  $((t2 - t0))s
  VIP:                   https://$VIP:$API_PORT
  kctl:                  KCTL_CONFIG=$KCTL_CONFIG $KBIN/kctl kubernetes health $CLUSTER
  kubectl:               $K8SBIN/kubectl --kubeconfig $LAB/n1/etc/kubernetes/admin.conf get nodes
  logs:                  $LAB/log, $LAB/nN/var/log/kcore
  remove it:             make lab-down
EOF
}

# echo_image is the lab's test workload image, as manifests/images.go pins it.
echo_image() { sed -n 's/^[[:space:]]*EchoImage = "\(.*\)"$/\1/p' "$REPO/manifests/images.go"; }

# coredns_available is true once every CoreDNS replica is available.
coredns_available() {
  local have want
  have=$(kubectl -n kube-system get deployment coredns -o 'jsonpath={.status.availableReplicas}')
  want=$(kubectl -n kube-system get deployment coredns -o 'jsonpath={.spec.replicas}')
  [ -n "$want" ] && [ "$have" = "$want" ]
}

# check_pod_done is true once the workload check pod ended, either way.
check_pod_done() {
  case $(kubectl get pod kcore-lab-check -o 'jsonpath={.status.phase}') in
    Succeeded | Failed) return 0 ;;
  esac
  return 1
}

# workload_check runs one pod the way docs/lab.md shows users: the echo image,
# pulled through the lab registry, resolves two Services' names through
# CoreDNS (reached at its Service IP through kube-proxy); it prints what it
# ran and the answer. A pod its kubelet turns away before its container
# starts (right after the nodes turned Ready) is run again, at most
# WORKLOAD_TRIES times; one whose container ran and failed fails the lab.
WORKLOAD_TRIES=3
workload_check() {
  local image try phase started
  image=$(echo_image)
  [ -n "$image" ] || die "no EchoImage in manifests/images.go"
  wait_for "CoreDNS available" "$NODE_TIMEOUT" coredns_available
  for ((try = 1; try <= WORKLOAD_TRIES; try++)); do
    say "workload check: kubectl run kcore-lab-check --image=$image --restart=Never -- -lookup kubernetes.default.svc.cluster.local -lookup kube-dns.kube-system.svc.cluster.local"
    kubectl delete pod kcore-lab-check --ignore-not-found --wait=true >/dev/null
    kubectl run kcore-lab-check --image="$image" --restart=Never -- \
      -lookup kubernetes.default.svc.cluster.local -lookup kube-dns.kube-system.svc.cluster.local >/dev/null
    wait_for "the workload check pod" "$NODE_TIMEOUT" check_pod_done
    phase=$(kubectl get pod kcore-lab-check -o 'jsonpath={.status.phase}')
    started=$(kubectl get pod kcore-lab-check -o 'jsonpath={.status.containerStatuses[0].state.terminated.exitCode}')
    if [ "$phase" = Succeeded ]; then
      kubectl logs kcore-lab-check
      kubectl delete pod kcore-lab-check --wait=false >/dev/null
      return 0
    fi
    if [ -n "$started" ]; then
      kubectl logs kcore-lab-check || true
      die "workload check failed: its container exited $started (its output is above)"
    fi
    say "workload check: the pod ended $phase before its container ran: $(kubectl get pod kcore-lab-check -o 'jsonpath={.status.reason}: {.status.message}') (try $try of $WORKLOAD_TRIES)"
  done
  die "workload check: the pod never ran in $WORKLOAD_TRIES tries"
}

# kill_pids SIGNAL PID...: signal each live pid.
kill_pids() {
  local sig=$1 p
  shift
  for p in "$@"; do kill "-$sig" "$p" 2>/dev/null || true; done
}

# lab_netns lists the lab's namespaces that exist, however many were made.
lab_netns() { ip netns list 2>/dev/null | awk '$1 ~ /^kcore-lab-[nc][0-9]+$/ {print $1}'; }

# netns_pids prints the pids of every process inside the lab's namespaces
# (or only MACHINE's).
netns_pids() {
  local n
  for n in ${MACHINE:-$(lab_netns)}; do
    ip netns pids "$n" 2>/dev/null || true
  done
}

# nsfs_mounts prints the network namespace mounts under the lab (or only
# under MACHINE's root): the host's, and those inside the machines with
# mounts of their own, read and reached through one of each machine's
# processes.
nsfs_mounts() {
  local -A seen=()
  local p m under=$LAB/
  [ -z "${MACHINE:-}" ] || under=$LAB/${MACHINE#kcore-lab-}/
  for p in $(netns_pids) self; do
    m=$(readlink "/proc/$p/ns/mnt" 2>/dev/null) || continue
    [ -z "${seen[$m]:-}" ] || continue
    seen[$m]=1
    awk -v under="$under" '$3 == "nsfs" && index($2, under) == 1 {print $2}' "/proc/$p/mounts" 2>/dev/null |
      sed "s|^|/proc/$p/root|"
  done
  return 0
}

# pod_pids prints the pids of the processes in the lab's pods' network
# namespaces: containerd mounts them under each node's state directory (the
# lab profile's netns_mounts_under_state_dir), and a pod's processes are not
# in its node's namespace, so netns_pids does not see them.
pod_pids() {
  local -A inode=()
  local m p l
  while read -r m; do
    l=$(stat -L -c %i "$m" 2>/dev/null) && inode[$l]=1
  done < <(nsfs_mounts)
  [ ${#inode[@]} -gt 0 ] || return 0
  for p in /proc/[0-9]*; do
    l=$(readlink "$p/ns/net" 2>/dev/null) || continue
    l=${l#net:[}
    l=${l%]}
    if [ -n "${inode[$l]:-}" ]; then echo "${p#/proc/}"; fi
  done
  return 0
}

# machine_only_pids prints the pids of MACHINE's processes and pods.
machine_only_pids() {
  netns_pids
  pod_pids
}

lab_pids() {
  netns_pids
  pod_pids
  local f
  for f in "$LAB"/run/*.pid "$REGISTRY_DIR/registry.pid"; do
    [ -f "$f" ] && cat "$f"
  done
  return 0
}

down() {
  need_root
  say "removing the lab"
  # Nothing of the lab is kept, so nothing needs a clean shutdown.
  kill_all lab_pids || true
  if [ -d "$LAB" ]; then
    local m
    while read -r m; do
      if [ -n "$m" ]; then umount -l "$m" 2>/dev/null || true; fi
    done < <(awk -v lab="$LAB" 'index($2, lab) == 1 {print $2}' /proc/mounts | sort -r)
    disks_down
  fi
  local n
  for n in $(lab_netns); do
    ip netns del "$n" 2>/dev/null || true
    ip link del "kcl-${n#kcore-lab-}" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  if [ -e "$LAB/.kcore-lab" ]; then
    host_dirs_remove
    rm -rf "$LAB"
  elif [ -e "$LAB" ]; then
    say "not removing $LAB: it has no .kcore-lab marker, so the lab did not make it"
  fi
  say "lab removed"
}

# running_pids keeps the pids on stdin that are still alive.
running_pids() {
  local p
  while read -r p; do kill -0 "$p" 2>/dev/null && echo "$p"; done
  return 0
}

# machine_pids prints the pids of what a power cut of the lab stops: the
# processes in its namespaces, the pods' and the controllers' (not the
# registry's).
machine_pids() {
  netns_pids
  pod_pids
  cat "$LAB"/run/controller-*.pid 2>/dev/null
  return 0
}

# kill_all PIDS_FN: SIGKILL every running pid PIDS_FN prints, again until
# none runs (a unit its agent restarted meanwhile is new), at most five
# rounds; it fails, saying which, when some still run.
kill_all() {
  local fn=$1 pids i
  for i in 1 2 3 4 5; do
    mapfile -t pids < <("$fn" | sort -u | running_pids)
    [ ${#pids[@]} -eq 0 ] && return 0
    say "SIGKILL ${#pids[@]} processes"
    kill_pids KILL "${pids[@]}"
    sleep 1
  done
  mapfile -t pids < <("$fn" | sort -u | running_pids)
  [ ${#pids[@]} -eq 0 ] && return 0
  say "${#pids[@]} lab processes still run after five rounds of SIGKILL: ${pids[*]}"
  return 1
}

# stop cuts the power of every lab machine and of the controllers at once:
# SIGKILL to each process in the namespaces, the pods and the replicas, then
# what a reboot loses: the pods' network namespace mounts, the tmpfs mounts,
# each node's run directory (its /run) and the API addresses keepalived had
# added. Everything on disk stays (data dirs, certificates, etcd, the disks);
# the registry stays up, as a registry outside the lab would.
stop() {
  need_root
  [ -e "$LAB/.kcore-lab" ] || die "no lab at $LAB to stop (make lab first)"
  local n m
  kill_all machine_pids || die "could not stop every process of the lab"
  # Everything mounted under a node's /run (containers' root filesystems,
  # the pods' network namespaces) and every tmpfs (the pods' secret
  # volumes) goes, as on a reboot; the disks' mounts stay.
  while read -r m; do
    if [ -n "$m" ]; then umount -l "$m" 2>/dev/null || true; fi
  done < <(awk -v lab="$LAB" 'index($2, lab) == 1 && ($2 ~ "^" lab "/n[0-9]+/run/" || $3 == "nsfs" || $3 == "tmpfs") {print $2}' /proc/mounts | sort -r)
  for n in $(lab_netns); do
    n=${n#kcore-lab-}
    rm -rf "${LAB:?}/$n/run" || die "could not empty $(nodeid "$n")'s run directory $LAB/$n/run"
    local a
    for a in $(ip -n "$(ns "$n")" -4 -o addr show dev eth0 | awk '{print $4}'); do
      [ "${a%/*}" = "$(node_addr "$n")" ] || ip -n "$(ns "$n")" addr del "$a" dev eth0 2>/dev/null || true
    done
  done
  date +%s >"$LAB/run/stopped-at"
  say "lab stopped: every process killed, state kept in $LAB; power it on with 'make lab-start'"
}

# start powers a stopped lab on: the controllers from their data dirs, then
# each node's agent, which starts its units from what it last applied and
# renews what expired while the lab was off. It waits until the cluster is
# ready again and says how long that took.
start() {
  need_root
  [ -e "$LAB/.kcore-lab" ] || die "no lab at $LAB to start (make lab first)"
  local alive
  alive=$(cat "$LAB"/run/controller-*.pid 2>/dev/null | running_pids)
  [ -z "$alive" ] || die "the lab's controllers are running (pids $alive): stop it first"
  CURRENT_VERSION=$("$K8SBIN/kube-apiserver" --version | awk '{print $2}')
  if [ -f "$LAB/run/stopped-at" ]; then
    say "powering the lab on after $(($(date +%s) - $(cat "$LAB/run/stopped-at")))s off"
  fi
  if ! { [ -f "$REGISTRY_DIR/registry.pid" ] && kill -0 "$(cat "$REGISTRY_DIR/registry.pid")" 2>/dev/null; }; then
    "$REPO/scripts/lab-registry.sh" start "$REGISTRY_DIR" "$REGISTRY_ADDR"
  fi
  local i n t0
  t0=$(date +%s)
  for i in 0 1 2; do controller_start "$i"; done
  wait_for "three controller replicas" 90 three_members
  for n in $(lab_netns); do node_up "${n#kcore-lab-}"; done
  wait_for "cluster $CLUSTER ready (kctl kubernetes health)" "$APPLY_TIMEOUT" kctl kubernetes health "$CLUSTER"
  say "cluster $CLUSTER ready $(($(date +%s) - t0))s after power-on"
  kctl kubernetes health "$CLUSTER"
}

status() {
  local n
  ip -br addr show "$BRIDGE" 2>/dev/null || echo "no bridge $BRIDGE"
  if [ -f "$REGISTRY_DIR/registry.pid" ] && kill -0 "$(cat "$REGISTRY_DIR/registry.pid")" 2>/dev/null; then
    echo "registry: https://$REGISTRY_ADDR pid $(cat "$REGISTRY_DIR/registry.pid")"
  fi
  for n in $(lab_netns); do
    echo "$n: $(ip netns pids "$n" | wc -l) processes; $(ip -n "$n" -br addr show eth0 2>/dev/null)"
  done
  if [ -f "$KCTL_CONFIG" ]; then kctl kubernetes health "$CLUSTER" || true; fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  stop) stop ;;
  start) start ;;
  status) status ;;
  machine-up) shift && machine_up "$@" ;;
  machine-down) shift && machine_down "$@" ;;
  machine-stop) shift && machine_stop "$@" ;;
  machine-start) shift && machine_start "$@" ;;
  manifest) [ $# -eq 2 ] || die "usage: scripts/lab.sh manifest FILE"; with_lab_ca "$2" ;;
  *) echo "usage: scripts/lab.sh up|down|stop|start|status|machine-up|machine-down|machine-stop|machine-start cN...|manifest FILE" >&2; exit 2 ;;
esac
