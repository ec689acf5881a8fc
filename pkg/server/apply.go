package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// commander is a store payload that wraps itself in a Command.
type commander interface {
	Command() (store.Command, error)
}

// apply stamps the command with the leader's time and a fresh id,
// replicates it and returns the index it was applied at; a failed command
// comes back as its store error.
func (s *Server) apply(ctx context.Context, p commander) (uint64, error) {
	res, err := s.replicate(ctx, p, "", "")
	return res.Index, err
}

// replicate is apply returning the whole store result. With a request id
// the command is applied at most once per (caller, requestID): a repeat
// gets the first application's result, with Replayed set.
func (s *Server) replicate(ctx context.Context, p commander, caller, requestID string) (store.Result, error) {
	cmd, err := p.Command()
	if err != nil {
		return store.Result{}, err
	}
	cmd.Time = s.now().UTC().Format(time.RFC3339Nano)
	cmd.ID = newID()
	if requestID != "" {
		cmd.Caller, cmd.RequestID = caller, requestID
	}
	start := time.Now()
	res, err := s.backend.Apply(ctx, cmd)
	s.metrics.applyDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		return store.Result{}, fmt.Errorf("apply %s: %w", cmd.Type, err)
	}
	return res, res.Err
}

// audit commits the call's audit entry through raft. A failure is logged:
// the answer has been given already.
func (s *Server) audit(c *call, status int, code string) {
	entry, err := s.auditEntry(c, status, code)
	if err != nil {
		s.log.Error("encode audit entry", "err", err)
		return
	}
	ctx, cancel := detached(c.r.Context())
	defer cancel()
	if err := s.commitAudit(ctx, entry); err != nil {
		s.log.Error("commit audit entry", "route", c.rt.pattern, "subject", c.subject(), "result", status, "err", err)
	}
}

// auditEntry encodes the call's audit entry with its result.
func (s *Server) auditEntry(c *call, status int, code string) (json.RawMessage, error) {
	return json.Marshal(apiv1.AuditEntry{
		Time:     s.now().UTC().Format(time.RFC3339Nano),
		ID:       c.reqID,
		Subject:  c.subject(),
		Role:     c.role(),
		Method:   c.r.Method,
		Route:    c.rt.pattern,
		Action:   c.rt.action,
		Object:   c.object,
		PlanHash: c.planHash,
		Result:   status,
		Code:     code,
		Summary:  c.summary,
	})
}

// applyAudited commits ops together with the call's audit entry (result 200)
// in one log entry, so a write costs one raft commit, not two, and the two
// cannot be separated. When ops fail nothing is committed and finish audits
// the refusal on its own. The call's request id, when it has one, makes
// the write apply at most once: a retry answers as the first attempt did.
func (s *Server) applyAudited(c *call, ops ...store.Op) (uint64, error) {
	entry, err := s.auditEntry(c, http.StatusOK, "")
	if err != nil {
		return 0, fmt.Errorf("encode audit entry: %w", err)
	}
	res, err := s.replicate(c.r.Context(), s.auditBatch(ops, entry), c.caller(), c.clientReqID)
	if res.Replayed {
		c.w.Header().Set(apiv1.HeaderRequestReplayed, "true")
	}
	if err != nil {
		return res.Index, err
	}
	idx := res.Index
	c.skipAudit = true
	return idx, nil
}
