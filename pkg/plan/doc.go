// Package plan computes what applying manifests would do: desired clusters ×
// stored clusters × registered nodes' facts → a Plan of typed actions per
// cluster, the field diff that causes each, ordered steps per node and
// component with their disruption and the projected etcd quorum, blocking
// issues and warnings.
//
// Steps are the difference between two renders: the stored and the desired
// cluster are rendered with pkg/render (with pki.Placeholder secrets, so no
// key material is involved) and NodeDiff compares each node's NodeStates;
// every step lists the files, units, tasks and volumes it stands for, with
// the reason render gave each. Nothing maps manifest fields to effects.
//
// The package is pure: no I/O, no clock, no randomness. The same Input always
// yields the same Plan and the same Hash, so the controller can recompute a
// plan a client submits and refuse it when anything changed. WriteText prints
// a plan for people; the Plan type marshals to the versioned JSON format that
// docs/plan.md documents, and Read loads it back.
package plan
