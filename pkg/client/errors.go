package client

import (
	"errors"
	"fmt"
	"net/http"

	"kcore.dev/kcore/pkg/apiv1"
)

// Sentinel errors an *APIError matches with errors.Is, one per stable code.
var (
	ErrBadRequest      = errors.New("bad request")
	ErrUnauthenticated = errors.New("unauthenticated")
	ErrForbidden       = errors.New("forbidden")
	ErrNotFound        = errors.New("not found")
	ErrConflict        = errors.New("conflict")
	ErrQuorumLoss      = errors.New("change would lose quorum")
	ErrSchemaTooNew    = errors.New("snapshot schema too new")
	ErrTooLarge        = errors.New("request too large")
	ErrNoLeader        = errors.New("no leader")
	ErrPlanRequired    = errors.New("change only through plan and apply")
	ErrInternal        = errors.New("internal controller error")
)

// APIError is an error answered by a controller.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the stable error code (apiv1.Code*).
	Code string
	// Message is the controller's explanation.
	Message string
	// Details are code-specific facts, e.g. {"leader": "host:port"}.
	Details map[string]string
	// Addr is the controller address that answered.
	Addr string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("controller %s: %s (%d %s)", e.Addr, msg, e.Status, e.Code)
}

// Is matches the sentinel error of e's code.
func (e *APIError) Is(target error) bool {
	s, ok := sentinels()[e.Code]
	return ok && s == target
}

func sentinels() map[string]error {
	return map[string]error{
		apiv1.CodeBadRequest:      ErrBadRequest,
		apiv1.CodeUnauthenticated: ErrUnauthenticated,
		apiv1.CodeForbidden:       ErrForbidden,
		apiv1.CodeNotFound:        ErrNotFound,
		apiv1.CodeConflict:        ErrConflict,
		apiv1.CodeQuorumLoss:      ErrQuorumLoss,
		apiv1.CodeSchemaTooNew:    ErrSchemaTooNew,
		apiv1.CodeTooLarge:        ErrTooLarge,
		apiv1.CodeNoLeader:        ErrNoLeader,
		apiv1.CodePlanRequired:    ErrPlanRequired,
		apiv1.CodeInternal:        ErrInternal,
	}
}

// codeForStatus guesses a code for an error answer without a JSON body
// (e.g. from a proxy in between).
func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return apiv1.CodeBadRequest
	case http.StatusUnauthorized:
		return apiv1.CodeUnauthenticated
	case http.StatusForbidden:
		return apiv1.CodeForbidden
	case http.StatusNotFound:
		return apiv1.CodeNotFound
	case http.StatusConflict:
		return apiv1.CodeConflict
	case http.StatusRequestEntityTooLarge:
		return apiv1.CodeTooLarge
	case http.StatusServiceUnavailable:
		return apiv1.CodeNoLeader
	}
	return apiv1.CodeInternal
}

// ErrUnreachable is returned (wrapped) when no controller address could be reached.
var ErrUnreachable = errors.New("no controller reachable")
