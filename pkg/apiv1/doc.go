// Package apiv1 holds the wire types of the controller's HTTP API under /v1:
// objects and lists, error bodies and their stable codes, health, members,
// join tokens, certificates and audit entries. pkg/server answers with these
// types and pkg/client decodes them, so both sides share one definition.
//
// The contract is /work/notes/api-routes.md and docs/controller.md. The
// package is pure: types, constants and tiny helpers, no I/O.
package apiv1
