package server

import (
	"bytes"
	"fmt"
	"strconv"

	"kcore.dev/kcore/pkg/apiv1"
)

// saveSnapshot streams a user snapshot. It is taken into memory first so a
// failure is still answered with an error body.
func (s *Server) saveSnapshot(c *call) (any, error) {
	var buf bytes.Buffer
	if err := s.backend.Snapshot(c.r.Context(), &buf); err != nil {
		return nil, fmt.Errorf("take snapshot: %w", err)
	}
	c.wrote = true
	c.w.Header().Set("Content-Type", apiv1.ContentTypeSnapshot)
	c.w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	c.w.WriteHeader(200)
	if _, err := buf.WriteTo(c.w); err != nil {
		s.log.Warn("send snapshot", "err", err)
	}
	return nil, nil
}

// restoreSnapshot replaces the replicated state with the request body,
// which the backend reads as a stream and refuses as soon as it is not a
// snapshot.
func (s *Server) restoreSnapshot(c *call) (any, error) {
	if err := s.backend.Restore(c.r.Context(), c.r.Body); err != nil {
		return nil, fmt.Errorf("restore snapshot: %w", err)
	}
	return apiv1.WriteResponse{Index: s.backend.State().LastIndex()}, nil
}
