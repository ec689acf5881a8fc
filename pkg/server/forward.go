package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// hopHeaders are not copied when forwarding.
func hopHeader(h string) bool {
	switch http.CanonicalHeaderKey(h) {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// forwardOr503 forwards the call to the leader's HTTP address, or answers
// 503 no-leader (with the leader's address when known) when this replica
// may not forward: no forwarding configured, the request was already
// forwarded once, or the leader is unknown or unreachable.
func (s *Server) forwardOr503(c *call) {
	addr := s.leaderHTTP()
	if s.forwarder == nil || c.forwarded || addr == "" {
		s.finish(c, nil, s.noLeader(nil))
		return
	}
	if err := s.forward(c, addr); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.finish(c, nil, err)
			return
		}
		s.finish(c, nil, s.noLeader(err))
	}
}

// forward proxies the call to the leader and copies the answer back. The
// leader authorizes and audits with the original caller's identity.
func (s *Server) forward(c *call, addr string) error {
	url := "https://" + addr + c.r.URL.RequestURI()
	out, err := http.NewRequestWithContext(c.r.Context(), c.r.Method, url, c.r.Body)
	if err != nil {
		return fmt.Errorf("forward to %s: %w", addr, err)
	}
	for k, vs := range c.r.Header {
		if !hopHeader(k) {
			out.Header[k] = vs
		}
	}
	out.ContentLength = c.r.ContentLength
	out.Header.Set(apiv1.HeaderForwarded, s.backend.ID())
	if c.id != nil {
		out.Header.Set(headerForwardSubject, c.id.Subject)
		if c.id.Expired {
			out.Header.Set(headerForwardExpiredRole, c.id.Role)
		} else {
			out.Header.Set(headerForwardRole, c.id.Role)
		}
		out.Header.Set(headerForwardSerial, c.id.Serial)
		if !c.id.NotAfter.IsZero() {
			out.Header.Set(headerForwardNotAfter, c.id.NotAfter.UTC().Format(time.RFC3339))
		}
	}
	resp, err := s.forwarder.Do(out)
	if err != nil {
		return fmt.Errorf("forward to %s: %w", addr, err)
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		if !hopHeader(k) {
			c.w.Header()[k] = vs
		}
	}
	if c.id == nil && resp.StatusCode >= http.StatusBadRequest {
		s.anonymousFailed(sourceOf(c.r), c.rt, resp.StatusCode)
	}
	c.w.WriteHeader(resp.StatusCode)
	if _, err := io.Copy(c.w, resp.Body); err != nil {
		s.log.Warn("copy forwarded response", "leader", addr, "err", err)
	}
	return nil
}

// leaderHTTP is the leader's HTTP address from its Member object, "" when
// no leader is known or it never recorded one.
func (s *Server) leaderHTTP() string {
	id, _ := s.backend.Leader()
	if id == "" {
		return ""
	}
	return s.memberHTTP(id)
}
