package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// t0 is the stamp of the first entry in the retention tests.
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// auditAt returns an AppendAudit command stamped at ts with entry data.
func auditAt(t *testing.T, ts time.Time, data string) Command {
	t.Helper()
	c := mustCmd(t)(AppendAudit{Entry: json.RawMessage(data)}.Command())
	c.Time = ts.UTC().Format(time.RFC3339Nano)
	return c
}

// withPolicy returns a state whose retention is p, stored at index 1.
func withPolicy(t *testing.T, p AuditRetention) *State {
	t.Helper()
	s := New(nil)
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Apply(1, putCmd(t, KindAuditPolicy, AuditPolicyName, string(b), nil)); r.Err != nil {
		t.Fatal(r.Err)
	}
	return s
}

// auditNames lists the indexes of the audit entries kept.
func auditNames(s *State) string {
	var out []string
	for _, o := range s.List(KindAudit) {
		out = append(out, itoa(o.CreateIndex))
	}
	return fmt.Sprint(out)
}

func TestAuditRetentionByCountAtTheBound(t *testing.T) {
	const max = 3
	s := withPolicy(t, AuditRetention{MaxEntries: max})
	for i := uint64(2); i < 2+max; i++ {
		s.Apply(i, auditAt(t, t0, `{}`))
	}
	if got := auditNames(s); got != "[2 3 4]" {
		t.Fatalf("at the bound kept %s, want all %d", got, max)
	}
	s.Apply(5, auditAt(t, t0, `{}`))
	if got := auditNames(s); got != "[3 4 5]" {
		t.Fatalf("past the bound kept %s, want the newest %d", got, max)
	}
}

func TestAuditRetentionByBytesAtTheBound(t *testing.T) {
	entry := `{"n":"0123456789"}` // 18 bytes
	size := int64(len(entry))
	s := withPolicy(t, AuditRetention{MaxBytes: 3 * size})
	for i := uint64(2); i <= 4; i++ {
		s.Apply(i, auditAt(t, t0, entry))
	}
	if got, want := s.AuditBytes(), 3*size; got != want || auditNames(s) != "[2 3 4]" {
		t.Fatalf("at the bound: %d bytes in %s, want %d in all three", got, auditNames(s), want)
	}
	s.Apply(5, auditAt(t, t0, entry))
	if got := auditNames(s); got != "[3 4 5]" || s.AuditBytes() != 3*size {
		t.Fatalf("past the bound: kept %s (%d bytes), want [3 4 5]", got, s.AuditBytes())
	}
	// One byte more than the oldest it displaces drops two.
	s.Apply(6, auditAt(t, t0, `{"n":"01234567890"}`))
	if got := auditNames(s); got != "[5 6]" || s.AuditBytes() != 2*size+1 {
		t.Fatalf("one byte past: kept %s (%d bytes), want [5 6]", got, s.AuditBytes())
	}
	// One entry bigger than the bound drops all the others, never itself.
	big := `{"n":"` + string(bytes.Repeat([]byte("x"), int(4*size))) + `"}`
	s.Apply(7, auditAt(t, t0, big))
	if got := auditNames(s); got != "[7]" || s.AuditBytes() != int64(len(big)) {
		t.Fatalf("after an oversized entry: kept %s (%d bytes), want [7]", got, s.AuditBytes())
	}
}

func TestAuditRetentionByAgeAtTheBound(t *testing.T) {
	const maxAge = 30 * 24 * time.Hour
	s := withPolicy(t, AuditRetention{MaxAgeSeconds: int64(maxAge / time.Second)})
	s.Apply(2, auditAt(t, t0, `{}`))
	s.Apply(3, auditAt(t, t0.Add(time.Nanosecond), `{}`))
	s.Apply(4, auditAt(t, t0.Add(time.Hour), `{}`))
	// Exactly maxAge after entry 2: it is at the cutoff, not before it.
	s.Apply(5, auditAt(t, t0.Add(maxAge), `{}`))
	if got := auditNames(s); got != "[2 3 4 5]" {
		t.Fatalf("at the age bound kept %s, want all", got)
	}
	s.Apply(6, auditAt(t, t0.Add(maxAge+time.Nanosecond), `{}`))
	if got := auditNames(s); got != "[3 4 5 6]" {
		t.Fatalf("one nanosecond past kept %s, want [3 4 5 6]", got)
	}
	s.Apply(7, auditAt(t, t0.Add(maxAge+2*time.Hour), `{}`))
	if got := auditNames(s); got != "[5 6 7]" {
		t.Fatalf("two hours past kept %s, want [5 6 7]", got)
	}
	// A leader whose clock went back drops nothing for age.
	s.Apply(8, auditAt(t, t0, `{}`))
	if got := auditNames(s); got != "[5 6 7 8]" {
		t.Fatalf("after an earlier stamp kept %s, want [5 6 7 8]", got)
	}
}

func TestAuditRetentionKeepsEntriesWithoutAStamp(t *testing.T) {
	s := withPolicy(t, AuditRetention{MaxAgeSeconds: 60})
	s.Apply(2, mustCmd(t)(AppendAudit{Entry: json.RawMessage(`{}`)}.Command()))
	s.Apply(3, auditAt(t, t0.Add(time.Hour), `{}`))
	if got := auditNames(s); got != "[2 3]" {
		t.Fatalf("kept %s, want the unstamped entry too", got)
	}
}

func TestAuditRetentionDefaultsWithoutPolicy(t *testing.T) {
	if got := defaultRetention(); got != (AuditRetention{MaxEntries: AuditRetain}) {
		t.Fatalf("default retention %+v", got)
	}
	// A stored policy that does not decode falls back to the default.
	s := New(nil)
	s.Apply(1, putCmd(t, KindAuditPolicy, AuditPolicyName, `{"maxEntries":"many"}`, nil))
	s.Apply(2, auditAt(t, t0, `{}`))
	tx := s.begin()
	if got := tx.auditPolicy(); got != defaultRetention() {
		t.Fatalf("undecodable policy read as %+v", got)
	}
}

func TestAuditBytesSurviveSnapshotAndBatchRollback(t *testing.T) {
	s := withPolicy(t, AuditRetention{MaxEntries: 10})
	for i := uint64(2); i <= 5; i++ {
		s.Apply(i, auditAt(t, t0, `{"i":`+itoa(i)+`}`))
	}
	want := s.AuditBytes()
	if want != 4*int64(len(`{"i":2}`)) {
		t.Fatalf("AuditBytes = %d", want)
	}
	// A failed batch with an audit entry changes nothing.
	b := mustCmd(t)(Batch{Ops: []Op{putOp("K", "a", `{}`, nil), delOp("K", "missing", nil)}, Audit: &AppendAudit{Entry: json.RawMessage(`{"x":1}`)}}.Command())
	if r := s.Apply(6, b); r.Err == nil {
		t.Fatal("batch with a failing op succeeded")
	}
	if got := s.AuditBytes(); got != want {
		t.Fatalf("AuditBytes after a failed batch = %d, want %d", got, want)
	}
	var buf bytes.Buffer
	if _, err := s.Snapshot().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if got := mustRestore(t, buf.Bytes()).AuditBytes(); got != want {
		t.Fatalf("AuditBytes after restore = %d, want %d", got, want)
	}
}

// TestRetentionPutIsNotPartOfARequestTarget: the leader adds the
// retention put to whichever attempt of a write comes first, so a retry
// without it is the same request, answered as the first was.
func TestRetentionPutIsNotPartOfARequestTarget(t *testing.T) {
	s := New(nil)
	withID := func(b Batch) Command {
		c := mustCmd(t)(b.Command())
		c.Caller, c.RequestID, c.Time = "alice", "req-1", t0.Format(time.RFC3339Nano)
		return c
	}
	audit := &AppendAudit{Entry: json.RawMessage(`{}`)}
	first := withID(Batch{Ops: []Op{putOp(KindAuditPolicy, AuditPolicyName, `{"maxEntries":5}`, nil), putOp("K", "a", `{}`, nil)}, Audit: audit})
	retry := withID(Batch{Ops: []Op{putOp("K", "a", `{}`, nil)}, Audit: audit})
	if r := s.Apply(1, first); r.Err != nil {
		t.Fatal(r.Err)
	}
	r := s.Apply(2, retry)
	if r.Err != nil || !r.Replayed || r.Index != 1 {
		t.Fatalf("retry without the retention put: %+v, want the first attempt's result replayed", r)
	}
}

// TestAuditRetentionFollowsAPolicyChange: the decoded policy is kept
// between appends, but a new policy (or none, or one that does not decode)
// applies from the next append on.
func TestAuditRetentionFollowsAPolicyChange(t *testing.T) {
	s := withPolicy(t, AuditRetention{MaxEntries: 3})
	for i := uint64(2); i <= 5; i++ {
		s.Apply(i, auditAt(t, t0, `{}`))
	}
	if got := auditNames(s); got != "[3 4 5]" {
		t.Fatalf("under the first policy kept %s", got)
	}
	if r := s.Apply(6, putCmd(t, KindAuditPolicy, AuditPolicyName, `{"maxEntries":2}`, nil)); r.Err != nil {
		t.Fatal(r.Err)
	}
	s.Apply(7, auditAt(t, t0, `{}`))
	if got := auditNames(s); got != "[5 7]" {
		t.Fatalf("after the policy changed to 2 entries kept %s, want [5 7]", got)
	}
	if r := s.Apply(8, putCmd(t, KindAuditPolicy, AuditPolicyName, `{"maxEntries":"x"}`, nil)); r.Err != nil {
		t.Fatal(r.Err)
	}
	s.Apply(9, auditAt(t, t0, `{}`))
	if got := auditNames(s); got != "[5 7 9]" {
		t.Fatalf("a policy that does not decode must mean the default; kept %s", got)
	}
}
