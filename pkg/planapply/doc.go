// Package planapply is the pure core of POST /v1/plan and POST /v1/apply:
// Plan computes the plan of a request against a View of the stored
// clusters, ClusterUpdates and nodes, and Commit recomputes the plan a
// caller reviewed, refuses it when it is stale (Check: StaleError, with the
// reason) or blocked (BlockedError), and returns the store ops that apply
// it: one CAS put per created, changed or deleted cluster and per created
// or changed ClusterUpdate, for one atomic batch.
//
// The package does no I/O and reads no clock and no raft state: the server
// builds the View from the store at one index (NewView decodes it), merges
// the replica's node liveness into it, and passes in the render options and
// the time Commit stamps delete conditions with. pkg/server only decodes,
// authorizes, calls these functions and encodes; docs/plan.md describes the
// plans, docs/architecture.md where the package sits.
package planapply
