// Package client is the Go client of the controller's HTTP API (/v1, see
// pkg/apiv1): objects and blocking queries, node state, facts, heartbeats and
// reports, join tokens and certificates, membership, snapshots and audit.
//
// A Client holds every controller address of an installation. It sends each
// request to the last address that answered (or the leader it learnt of),
// moves on to the next address when one cannot be reached, follows a 503
// no-leader answer to the leader it names, and waits out a short election
// when every replica says there is no leader yet. Every write carries a
// random request id (apiv1.HeaderRequestID) that its retries reuse; the
// controller applies an object write at most once per id, so Put and Delete
// are also sent again when a connection breaks mid-request or a 2xx answer
// breaks off, and a retry gets the first attempt's answer. Any other
// failure comes back as an *APIError, which matches the sentinel errors of
// this package (ErrNotFound, ErrConflict, ...) with errors.Is. Responses are decoded
// strictly: an unknown field is an error, so client and server cannot drift
// apart silently.
package client
