package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// Defaults of AuditRetention.
const (
	// DefaultAuditMaxAge is how long audit entries are kept.
	DefaultAuditMaxAge = 30 * 24 * time.Hour
	// DefaultAuditMaxEntries is how many audit entries are kept at most.
	DefaultAuditMaxEntries = store.AuditRetain
	// DefaultAuditMaxBytes bounds the audit entries' total size.
	DefaultAuditMaxBytes = 64 << 20
)

// AuditRetention bounds the audit log by age, number of entries and total
// size. Zero fields take the Default* values. The leader stores it in the
// replicated state with the next audit entry whenever it differs from what
// is stored, and every replica's store trims by the stored one, so every
// replica keeps the same entries.
type AuditRetention struct {
	// MaxAge drops entries older than this (by the leader's stamps).
	MaxAge time.Duration
	// MaxEntries keeps at most this many entries.
	MaxEntries int
	// MaxBytes keeps at most this many bytes of entries.
	MaxBytes int64
}

// errBadRetention is wrapped by AuditRetention's validation errors.
var errBadRetention = errors.New("invalid audit retention")

// policy validates r, fills its defaults and returns it as the store's
// JSON.
func (r AuditRetention) policy() (json.RawMessage, error) {
	if r.MaxAge < 0 || r.MaxEntries < 0 || r.MaxBytes < 0 {
		return nil, fmt.Errorf("check audit retention %+v: bounds must not be negative: %w", r, errBadRetention)
	}
	if r.MaxAge == 0 {
		r.MaxAge = DefaultAuditMaxAge
	}
	if r.MaxEntries == 0 {
		r.MaxEntries = DefaultAuditMaxEntries
	}
	if r.MaxBytes == 0 {
		r.MaxBytes = DefaultAuditMaxBytes
	}
	if r.MaxAge < time.Second || r.MaxAge/time.Second > store.MaxAuditAgeSeconds {
		return nil, fmt.Errorf("check audit retention: max age %s: want 1s to %d s: %w", r.MaxAge, store.MaxAuditAgeSeconds, errBadRetention)
	}
	b, err := json.Marshal(store.AuditRetention{MaxAgeSeconds: int64(r.MaxAge / time.Second), MaxEntries: r.MaxEntries, MaxBytes: r.MaxBytes})
	if err != nil {
		return nil, fmt.Errorf("encode audit retention: %w", err)
	}
	return b, nil
}

// withRetention returns ops preceded by a put of this replica's audit
// retention when the stored one differs, so the audit entry committed
// with them is trimmed by it.
func (s *Server) withRetention(ops []store.Op) []store.Op {
	if cur, ok := s.backend.State().Get(apiv1.KindAuditPolicy, store.AuditPolicyName); ok && bytes.Equal(cur.Data, s.retention) {
		return ops
	}
	put := store.Op{Put: &store.Put{Kind: apiv1.KindAuditPolicy, Name: store.AuditPolicyName, Data: s.retention}}
	return append([]store.Op{put}, ops...)
}

// auditBatch is ops and an audit entry in one command, with the retention
// when it must be stored.
func (s *Server) auditBatch(ops []store.Op, entry json.RawMessage) commander {
	ops = s.withRetention(ops)
	if len(ops) == 0 {
		return store.AppendAudit{Entry: entry}
	}
	return store.Batch{Ops: ops, Audit: &store.AppendAudit{Entry: entry}}
}

// commitAudit commits one audit entry on its own.
func (s *Server) commitAudit(ctx context.Context, entry json.RawMessage) error {
	_, err := s.apply(ctx, s.auditBatch(nil, entry))
	return err
}
