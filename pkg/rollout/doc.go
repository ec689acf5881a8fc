// Package rollout is the pure core of ClusterUpdate rollouts: which nodes an
// update targets, in which order and batches they move, what each step
// disrupts, the rules that block a rollout (node and cluster readiness, the
// Kubernetes version-skew policy, the etcd upgrade path, the controller schema
// gates) and the state machine a roller drives over api.UpdateStatus.
//
// It does no I/O and reads no clock: Plan turns an Input into a RolloutPlan,
// Next says what the roller does next for a stored status, and the Mark,
// Approve, Pause, Resume and StartRollback functions return the status after
// a transition, stamped with a time the caller passes in. WriteText prints a
// plan in the style of pkg/plan. docs/updates.md describes the rules.
package rollout
