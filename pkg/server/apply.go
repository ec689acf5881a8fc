package server

import (
	"context"
	"encoding/json"
	"fmt"
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
	cmd, err := p.Command()
	if err != nil {
		return 0, err
	}
	cmd.Time = s.now().UTC().Format(time.RFC3339Nano)
	cmd.ID = newID()
	start := time.Now()
	res, err := s.backend.Apply(ctx, cmd)
	s.metrics.applyDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		return 0, fmt.Errorf("apply %s: %w", cmd.Type, err)
	}
	if res.Err != nil {
		return res.Index, res.Err
	}
	return res.Index, nil
}

// audit commits the call's audit entry through raft. A failure is logged:
// the answer has been given already.
func (s *Server) audit(c *call, status int, code string) {
	e := apiv1.AuditEntry{
		Time:     s.now().UTC().Format(time.RFC3339Nano),
		ID:       c.reqID,
		Subject:  c.subject(),
		Role:     c.role(),
		Method:   c.r.Method,
		Route:    c.rt.pattern,
		Object:   c.object,
		PlanHash: c.planHash,
		Result:   status,
		Code:     code,
	}
	b, err := json.Marshal(e)
	if err != nil {
		s.log.Error("encode audit entry", "err", err)
		return
	}
	ctx, cancel := detached(c.r.Context())
	defer cancel()
	if _, err := s.apply(ctx, store.AppendAudit{Entry: b}); err != nil {
		s.log.Error("commit audit entry", "route", c.rt.pattern, "subject", e.Subject, "result", status, "err", err)
	}
}
