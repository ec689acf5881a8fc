package store

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Where the audit log's retention is stored: one object the leader writes
// from its flags, read by every replica when it trims the log, so every
// replica trims the same entries whatever its own flags say.
const (
	// KindAuditPolicy holds the AuditRetention object.
	KindAuditPolicy = "AuditPolicy"
	// AuditPolicyName is the name of the one AuditRetention object.
	AuditPolicyName = "retention"
)

// MaxAuditAgeSeconds caps AuditRetention.MaxAgeSeconds (about 100 years),
// so the cutoff arithmetic cannot overflow; a larger value means no age
// bound.
const MaxAuditAgeSeconds = 100 * 366 * 24 * 3600

// AuditRetention bounds the audit log. After each append, the oldest
// entries are dropped while there are more than MaxEntries, while they
// take more than MaxBytes (the sum of their Data), and while the oldest is
// older than MaxAgeSeconds before the appending command's leader time
// stamp. The entry just appended is never dropped.
type AuditRetention struct {
	// MaxAgeSeconds drops entries stamped longer ago; 0 means no age bound.
	MaxAgeSeconds int64 `json:"maxAgeSeconds,omitempty"`
	// MaxEntries bounds the number of entries; 0 means AuditRetain.
	MaxEntries int `json:"maxEntries,omitempty"`
	// MaxBytes bounds the entries' data size; 0 means no size bound.
	MaxBytes int64 `json:"maxBytes,omitempty"`
}

// defaultRetention is the retention without a stored policy: what the
// store did before policies existed, so old logs replay the same.
func defaultRetention() AuditRetention { return AuditRetention{MaxEntries: AuditRetain} }

// auditPolicy returns the stored retention, or the default when there is
// none or it does not decode.
func (t *txn) auditPolicy() AuditRetention {
	o := t.get(KindAuditPolicy, AuditPolicyName)
	if o == nil {
		return defaultRetention()
	}
	return t.retention.decode(o.Data)
}

// retentionMemo holds the last retention policy decoded and the bytes it
// was decoded from: every audit append reads the policy, which changes
// when the leader's flags do, so decoding it each time only made garbage.
type retentionMemo struct {
	mu   sync.Mutex
	data []byte
	p    AuditRetention
}

// decode returns the policy data holds, or the default when it does not
// decode.
func (m *retentionMemo) decode(data []byte) AuditRetention {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data != nil && bytes.Equal(m.data, data) {
		return m.p
	}
	p := defaultRetention()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err == nil {
		if p.MaxEntries <= 0 {
			p.MaxEntries = AuditRetain
		}
	} else {
		p = defaultRetention()
	}
	m.data, m.p = bytes.Clone(data), p
	return p
}

// trimAudit drops the oldest audit entries the retention policy no longer
// keeps, never the one appended at t.index. An entry whose time stamp does
// not parse is never dropped for its age (the walk stops there).
func (t *txn) trimAudit() {
	p := t.auditPolicy()
	count := t.counts(KindAudit) + t.kindDelta[KindAudit]
	size := t.auditBytes() + t.auditDelta
	cutoff, aged := ageCutoff(t.time, p.MaxAgeSeconds)
	newest := key(KindAudit, AuditName(t.index))
	type drop struct {
		key  []byte
		size int64
	}
	var drops []drop
	t.txn.Root().WalkPrefix(key(KindAudit, ""), func(k []byte, v any) bool {
		if bytes.Equal(k, newest) {
			return true
		}
		o := v.(*Object)
		old := false
		if aged {
			stamp, ok := stampNanos(o.CreateTime)
			old = ok && stamp < cutoff
		}
		if count <= p.MaxEntries && (p.MaxBytes <= 0 || size <= p.MaxBytes) && !old {
			return true
		}
		drops = append(drops, drop{key: k, size: int64(len(o.Data))})
		count--
		size -= int64(len(o.Data))
		return false
	})
	for _, d := range drops {
		t.txn.Delete(d.key)
		t.kindDelta[KindAudit]--
		t.auditDelta -= d.size
		t.keys[string(d.key)] = struct{}{}
	}
	if len(drops) > 0 {
		t.kinds[KindAudit] = t.index
	}
}

// ageCutoff is the time stamp (nanoseconds since the Unix epoch) before
// which entries are too old, from the command's leader stamp; ok is false
// when there is no age bound or the stamp does not parse.
func ageCutoff(stamp string, maxAge int64) (int64, bool) {
	if maxAge <= 0 || maxAge > MaxAuditAgeSeconds {
		return 0, false
	}
	now, ok := stampNanos(stamp)
	if !ok {
		return 0, false
	}
	return now - maxAge*1e9, true
}
