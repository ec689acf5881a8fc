package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

// call is one request being served.
type call struct {
	w         http.ResponseWriter
	r         *http.Request
	rt        *route
	id        *Identity
	forwarded bool
	reqID     string
	// clientReqID is the caller's apiv1.HeaderRequestID, "" when absent.
	clientReqID string
	// object is "kind/name" for the audit entry.
	object string
	// planHash is the plan's hash for the audit entry, when there is one.
	planHash string
	// status is the success status; 0 means 200.
	status int
	// wrote is set by handlers that wrote the response themselves.
	wrote bool
	// skipAudit is set by handlers whose call changed nothing and need no
	// audit entry (facts and reports that did not change).
	skipAudit bool
	// summary is the summary of anonymous failures the call records.
	summary *apiv1.AnonymousSummary
}

// role is the caller's role, "" when anonymous.
func (c *call) role() string {
	if c.id == nil {
		return ""
	}
	return c.id.Role
}

// subject is the caller's name, "" when anonymous.
func (c *call) subject() string {
	if c.id == nil {
		return ""
	}
	return c.id.Subject
}

// stale reports whether the caller accepts a local read.
func (c *call) stale() bool {
	return c.r.URL.Query().Get(apiv1.ParamStale) == "true"
}

// recorder remembers the status written, for metrics and audit.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *Server) wrap(rt *route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		s.serve(rec, r, rt)
		s.metrics.observe(rt.pattern, rec.status, time.Since(start))
	})
}

func (s *Server) serve(w *recorder, r *http.Request, rt *route) {
	id, forwarded := s.identify(r)
	if !forwarded {
		stripForwardHeaders(r)
	}
	if id != nil && id.Expired && !forwarded {
		// A connection whose certificate expired serves this one call:
		// the client's next request makes a new handshake, with the
		// renewed certificate (HTTP/2 gets a GOAWAY).
		w.Header().Set("Connection", "close")
	}
	// A client without a certificate is limited and counted by the replica
	// it reached; a forwarded one was already.
	if id == nil && !forwarded && !s.admitAnonymous(w, r, rt) {
		return
	}
	if id == nil && !rt.anonymous {
		writeError(w, newError(apiv1.CodeUnauthenticated, "a client certificate issued by the controller CA is required"))
		if !forwarded {
			s.anonymousFailed(sourceOf(r), rt, http.StatusUnauthorized)
		}
		return
	}
	limit := s.maxBody
	if rt.maxBody > 0 {
		limit = rt.maxBody
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	c := &call{w: w, r: r, rt: rt, id: id, forwarded: forwarded, reqID: newID(), object: objectOf(r)}

	leader := s.backend.RaftState() == apiv1.StateLeader
	needLeader := rt.mode == leaderWrite || (rt.mode == leaderRead && !c.stale())
	if needLeader && !leader {
		s.forwardOr503(c)
		return
	}
	if id != nil {
		if err := s.authorize(c); err != nil {
			if !leader && !forwarded {
				// Let the leader refuse and audit it.
				s.forwardOr503(c)
				return
			}
			s.finish(c, nil, err)
			return
		}
	}
	if needLeader && rt.mode == leaderRead {
		if err := s.backend.VerifyLeader(r.Context()); err != nil {
			s.finish(c, nil, s.noLeader(err))
			return
		}
	}
	// Client request id (exactly-once writes, see requestid.go).
	if err := c.readRequestID(); err != nil {
		s.finish(c, nil, err)
		return
	}
	v, err := rt.handle(c)
	s.finish(c, v, err)
}

// authorize refuses an expired certificate (see expiredRefusal), then
// applies the route's refusal for every role, the routing table's role
// check and the own-node rule.
func (s *Server) authorize(c *call) error {
	if err := s.expiredRefusal(c); err != nil {
		return err
	}
	if c.rt.refuse != nil {
		if err := c.rt.refuse(c); err != nil {
			return err
		}
	}
	if !c.rt.allows(c.id.Role) {
		return forbidden("role %q may not call %s", c.id.Role, c.rt.pattern)
	}
	if c.rt.ownNode && c.id.Role == apiv1.RoleNode && c.r.PathValue("id") != c.id.Subject {
		return forbidden("node %q may only use its own routes, not node %q's", c.id.Subject, c.r.PathValue("id"))
	}
	return nil
}

// finish writes the response and commits the audit entry.
func (s *Server) finish(c *call, v any, err error) {
	status, code := c.status, ""
	if status == 0 {
		status = http.StatusOK
	}
	if err != nil {
		ae := s.toAPIError(err)
		code = ae.body.Code
		status = apiv1.StatusFor(code)
		if !c.wrote {
			writeError(c.w, ae)
		} else {
			s.log.Error("request failed after the response started", "route", c.rt.pattern, "err", err)
		}
	} else if !c.wrote {
		writeJSON(c.w, status, v)
	}
	if c.id == nil && status >= http.StatusBadRequest {
		// A failed anonymous call is counted by the replica the client
		// reached and summarised, never written through raft one by one.
		if !c.forwarded {
			s.anonymousFailed(sourceOf(c.r), c.rt, status)
		}
		return
	}
	if (c.rt.audit && !c.skipAudit) || status == http.StatusForbidden {
		s.audit(c, status, code)
	}
}

// objectOf names the object a request is about, for audit entries.
func objectOf(r *http.Request) string {
	switch {
	case r.PathValue("kind") != "" && r.PathValue("name") != "":
		return r.PathValue("kind") + "/" + r.PathValue("name")
	case r.PathValue("kind") != "":
		return r.PathValue("kind")
	case strings.HasPrefix(r.URL.Path, apiv1.PathNodes) && r.PathValue("id") != "":
		return "Node/" + r.PathValue("id")
	case strings.HasPrefix(r.URL.Path, apiv1.PathMembers) && r.PathValue("id") != "":
		return apiv1.KindMember + "/" + r.PathValue("id")
	case strings.HasPrefix(r.URL.Path, apiv1.PathUpdates) && r.PathValue("name") != "":
		return api.KindClusterUpdate + "/" + r.PathValue("name")
	case strings.HasPrefix(r.URL.Path, apiv1.PathClusters) && r.PathValue("name") != "":
		return api.KindKubernetesCluster + "/" + r.PathValue("name")
	}
	return ""
}

// newID returns a random request id.
func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// detached returns a context for work that must finish even when the
// caller has gone (audit entries).
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}
