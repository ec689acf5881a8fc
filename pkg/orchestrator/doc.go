// Package orchestrator is the leader-only loop that drives every stored
// KubernetesCluster through its phases. It issues and keeps the cluster PKI
// (sealed as a Secret), renders every member's NodeState (pkg/render) and
// publishes the ones whose content changed, then watches what agents report
// and what the health checks see to move the cluster between bootstrapping,
// updating, scaling, ready, degraded and deleting.
//
// It is level-triggered: each pass recomputes everything from the store, so a
// new leader continues where the old one stopped. Every decision (secrets,
// NodeStates, status) is committed through raft in one CAS batch before an
// agent can act on it; a pass that finds nothing to change writes nothing.
// Health checks (API /readyz, etcd /health with quorum) and etcd membership
// changes go through small interfaces whose real implementations dial HTTPS.
package orchestrator
