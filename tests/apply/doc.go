// Package apply tests POST /v1/plan and POST /v1/apply on three real
// replicas (tests/harness raft over loopback, HTTPS API servers with
// certificates from pkg/pki) through pkg/client: plans and applies sent to
// a follower are forwarded, one apply is one atomic raft batch seen by
// every replica, a no-op commits nothing, a plan made stale by another apply
// or a phase change of what it touches is refused with stale-plan (a health
// check's status write is not one), a blocked plan with
// plan-blocked and its issues, and roles are enforced per content.
package apply
