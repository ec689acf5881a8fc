// Package orchestrator is the leader-only loop that drives every stored
// KubernetesCluster through its phases. It issues and keeps the cluster PKI
// (sealed as a Secret), renders every member's NodeState (pkg/render) and
// publishes the ones whose content changed, then watches what agents report
// and what the health checks see to move the cluster between bootstrapping,
// updating, scaling, ready, degraded and deleting.
//
// A spec change whose new states restart etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler or keepalived on control planes,
// or kubelets, is not published at once: it becomes the cluster's spec
// rollout, which the ClusterUpdate roller (roll*.go) carries out one
// control plane at a time (kubelets in batches), with the VIP handed over
// first and the same health gates between steps.
//
// It is level-triggered: each pass recomputes everything from the store, so a
// new leader continues where the old one stopped. Every decision (secrets,
// NodeStates, status) is committed through raft in one CAS batch before an
// agent can act on it; a pass that finds nothing to change writes nothing.
// Health checks (API /readyz, etcd /health with quorum), etcd membership
// changes and the Kubernetes API (finalize: control-plane labels and taints;
// scale-in: cordon, drain, delete the Node) go through small interfaces whose
// real implementations dial HTTPS with the cluster PKI. Every health pass
// records status.lastHealthCheck; other passes write only real changes.
package orchestrator
