package server

import (
	"errors"
	"fmt"
	"net/http"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// apiError is an error with its API code, message and details.
type apiError struct {
	body apiv1.ErrorBody
	err  error
}

func (e *apiError) Error() string { return e.body.Message }

func (e *apiError) Unwrap() error { return e.err }

func newError(code, format string, args ...any) *apiError {
	err := fmt.Errorf(format, args...)
	return &apiError{body: apiv1.ErrorBody{Code: code, Message: err.Error()}, err: errors.Unwrap(err)}
}

func badRequest(format string, args ...any) *apiError {
	return newError(apiv1.CodeBadRequest, format, args...)
}

func forbidden(format string, args ...any) *apiError {
	return newError(apiv1.CodeForbidden, format, args...)
}

func notFound(format string, args ...any) *apiError {
	return newError(apiv1.CodeNotFound, format, args...)
}

// toAPIError maps any error a handler returns to an API error: API errors as
// they are, store and backend sentinels to their codes, anything else to
// internal.
func (s *Server) toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return newError(apiv1.CodeTooLarge, "request body over %d bytes", mbe.Limit)
	case errors.Is(err, ErrNotLeader):
		return s.noLeader(err)
	case errors.Is(err, ErrQuorumLoss):
		return &apiError{body: apiv1.ErrorBody{Code: apiv1.CodeQuorumLoss, Message: err.Error()}, err: err}
	case errors.Is(err, store.ErrConflict):
		return &apiError{body: apiv1.ErrorBody{Code: apiv1.CodeConflict, Message: err.Error()}, err: err}
	case errors.Is(err, store.ErrNotFound):
		return &apiError{body: apiv1.ErrorBody{Code: apiv1.CodeNotFound, Message: err.Error()}, err: err}
	case errors.Is(err, store.ErrSchemaTooNew):
		return &apiError{body: apiv1.ErrorBody{Code: apiv1.CodeSchemaTooNew, Message: err.Error()}, err: err}
	case errors.Is(err, store.ErrInvalid), errors.Is(err, store.ErrNotSealed):
		return &apiError{body: apiv1.ErrorBody{Code: apiv1.CodeBadRequest, Message: err.Error()}, err: err}
	}
	s.log.Error("internal error", "err", err)
	return &apiError{body: apiv1.ErrorBody{Code: apiv1.CodeInternal, Message: err.Error()}, err: err}
}

// noLeader is a 503 naming the leader's HTTP address when it is known.
func (s *Server) noLeader(cause error) *apiError {
	e := &apiError{body: apiv1.ErrorBody{Code: apiv1.CodeNoLeader, Message: "no leader reachable"}, err: cause}
	if cause != nil {
		e.body.Message = fmt.Sprintf("no leader reachable: %v", cause)
	}
	if addr := s.leaderHTTP(); addr != "" {
		e.body.Details = map[string]string{apiv1.DetailLeader: addr}
	}
	return e
}
