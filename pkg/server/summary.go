package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// summaryRoute is the route a follower hands its summary to the leader on;
// the leader's own summaries are audited as if it had called it.
const summaryRoute = "POST " + apiv1.PathAuditSummaries

// summaryAction is the audit action of a summary entry.
const summaryAction = "summarise anonymous failures"

// maxSummaryText bounds the strings of a received summary.
const maxSummaryText = 253

// errNoLeaderToSummarise is why a follower kept its summary for later.
var errNoLeaderToSummarise = errors.New("no leader to hand the summary to")

// Run summarises this replica's failed anonymous requests into the audit
// log every summary interval, until ctx ends. An interval without any
// commits nothing; a summary that cannot be committed (no leader) is kept
// for the next interval.
func (s *Server) Run(ctx context.Context) {
	ticks := s.summaryTicks
	if ticks == nil {
		t := time.NewTicker(s.summaryInterval)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			s.flushAnonymous(ctx)
		}
	}
}

// flushAnonymous commits one summary of the failures counted so far.
func (s *Server) flushAnonymous(ctx context.Context) {
	counts, ok := s.anon.take()
	if !ok {
		return
	}
	sum := counts.summary(s.backend.ID(), s.now())
	ctx, cancel := detached(ctx)
	defer cancel()
	var err error
	if s.backend.RaftState() == apiv1.StateLeader {
		err = s.commitSummary(ctx, sum)
	} else {
		err = s.sendSummary(ctx, sum)
	}
	if err != nil {
		s.anon.putBack(counts)
		s.log.Warn("commit summary of anonymous failures; kept for the next interval", "total", sum.Total, "err", err)
	}
}

// commitSummary commits the leader's own summary as its audit entry.
func (s *Server) commitSummary(ctx context.Context, sum apiv1.AnonymousSummary) error {
	entry, err := json.Marshal(apiv1.AuditEntry{
		Time: s.now().UTC().Format(time.RFC3339Nano), ID: newID(),
		Subject: s.backend.ID(), Role: apiv1.RoleController,
		Method: http.MethodPost, Route: summaryRoute, Action: summaryAction, Result: http.StatusOK,
		Summary: &sum,
	})
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	return s.commitAudit(ctx, entry)
}

// sendSummary hands a follower's summary to the leader, which commits it.
func (s *Server) sendSummary(ctx context.Context, sum apiv1.AnonymousSummary) error {
	addr := s.leaderHTTP()
	if s.forwarder == nil || addr == "" {
		return errNoLeaderToSummarise
	}
	body, err := json.Marshal(sum)
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+apiv1.PathAuditSummaries, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("send summary to %s: %w", addr, err)
	}
	req.Header.Set("Content-Type", apiv1.ContentTypeJSON)
	resp, err := s.forwarder.Do(req)
	if err != nil {
		return fmt.Errorf("send summary to %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("send summary to %s: status %d: %s", addr, resp.StatusCode, bytes.TrimSpace(msg))
	}
	return nil
}

// postSummary commits a follower's summary as the call's audit entry,
// before answering, so the follower keeps it when the commit fails.
func (s *Server) postSummary(c *call) (any, error) {
	var sum apiv1.AnonymousSummary
	if err := decodeStrict(c.r.Body, &sum); err != nil {
		return nil, err
	}
	if err := checkSummary(sum); err != nil {
		return nil, err
	}
	c.summary = &sum
	entry, err := s.auditEntry(c, http.StatusOK, "")
	if err != nil {
		return nil, fmt.Errorf("encode audit entry: %w", err)
	}
	if err := s.commitAudit(c.r.Context(), entry); err != nil {
		// The follower keeps its counts and sends them again: the refusal
		// is audited without them.
		c.summary = nil
		return nil, err
	}
	c.skipAudit = true
	return struct{}{}, nil
}

// checkSummary bounds a received summary to what a replica sends.
func checkSummary(sum apiv1.AnonymousSummary) error {
	if sum.Replica == "" || len(sum.Replica) > maxSummaryText {
		return badRequest("summary replica: want 1-%d characters", maxSummaryText)
	}
	for _, t := range []string{sum.Since, sum.Until} {
		if _, err := time.Parse(time.RFC3339, t); err != nil {
			return badRequest("summary interval %q: want RFC 3339", t)
		}
	}
	for reason := range sum.Reasons {
		if !knownReason(reason) {
			return badRequest("summary reason %q: unknown", reason)
		}
	}
	if len(sum.TopSources) > SummaryTopSources {
		return badRequest("summary names %d sources, at most %d", len(sum.TopSources), SummaryTopSources)
	}
	for _, src := range sum.TopSources {
		if src.Source == "" || len(src.Source) > maxSummaryText {
			return badRequest("summary source: want 1-%d characters", maxSummaryText)
		}
	}
	return nil
}

// knownReason reports whether reason is a Reason* value, the only keys a
// summary holds.
func knownReason(reason string) bool {
	switch reason {
	case apiv1.ReasonBadRequest, apiv1.ReasonJoinRefused, apiv1.ReasonUnauthenticated,
		apiv1.ReasonTooLarge, apiv1.ReasonRateLimited, apiv1.ReasonOther:
		return true
	}
	return false
}
