package apiv1

import (
	"fmt"
	"net/http"
)

// Stable error codes carried in ErrorBody.Code.
const (
	// CodeBadRequest: malformed JSON, unknown fields, invalid object (400).
	CodeBadRequest = "bad-request"
	// CodeUnauthenticated: no verified client certificate or bad join token (401).
	CodeUnauthenticated = "unauthenticated"
	// CodeForbidden: the caller's role may not use this route or object (403).
	CodeForbidden = "forbidden"
	// CodeNotFound: no such object, route or member (404).
	CodeNotFound = "not-found"
	// CodeConflict: a CAS condition failed or a plan is stale (409).
	CodeConflict = "conflict"
	// CodeQuorumLoss: a membership change would lose quorum or remove the last voter (409).
	CodeQuorumLoss = "quorum-loss"
	// CodeSchemaTooNew: a snapshot was written by a newer schema than this controller reads (409).
	CodeSchemaTooNew = "schema-too-new"
	// CodeTooLarge: the request body is over the limit (413).
	CodeTooLarge = "too-large"
	// CodeRateLimited: a caller without a client certificate sent more
	// requests than its source may (429); the Retry-After header says
	// when to try again.
	CodeRateLimited = "rate-limited"
	// CodeNoLeader: no leader is known or it could not be reached (503);
	// Details["leader"] holds the leader's HTTP address when known.
	CodeNoLeader = "no-leader"
	// CodePlanRequired: the object is a KubernetesCluster or a
	// ClusterUpdate, which change only through plan and apply (POST
	// /v1/apply) and the update routes, never through a raw PUT or DELETE
	// of /v1/objects, whatever the caller's role (405).
	CodePlanRequired = "plan-required"
	// CodeInternal: anything else (500).
	CodeInternal = "internal"
)

// DetailLeader is the ErrorBody.Details key holding the leader's HTTP address.
const DetailLeader = "leader"

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	// Code is one of the Code* constants.
	Code string `json:"code"`
	// Message says what went wrong for a human.
	Message string `json:"message"`
	// Details carries code-specific facts, e.g. {"leader": "host:port"}.
	Details map[string]string `json:"details,omitempty"`
}

// Error makes an ErrorBody usable as an error.
func (e *ErrorBody) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// StatusFor returns the HTTP status of an error code; 500 for an unknown code.
func StatusFor(code string) int {
	switch code {
	case CodeBadRequest:
		return http.StatusBadRequest
	case CodeUnauthenticated:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeConflict, CodeQuorumLoss, CodeSchemaTooNew, CodeStalePlan, CodePlanBlocked:
		return http.StatusConflict
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeNoLeader:
		return http.StatusServiceUnavailable
	case CodePlanRequired:
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}
