package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// batchLog is commandLog plus the commands whose failure must leave a
// shared transaction untouched: batches that change a key twice (and fail
// after the first change), batches failing at a later operation or at
// their audit entry, and entries refused before any change.
func batchLog(t *testing.T) []Command {
	log := commandLog(t)
	noEntry := &AppendAudit{}
	audit := &AppendAudit{Entry: json.RawMessage(`{"who":"bob"}`)}
	log = append(log,
		batchCmd(t, putOp("Node", "twice", `1`, nil), putOp("Node", "twice", `2`, nil)),
		batchCmd(t, putOp("Node", "twice", `3`, nil), delOp("Node", "twice", nil), putOp("Node", "twice", `4`, Expect(1))),
		batchCmd(t, delOp("Node", "twice", nil), putOp("Node", "twice", `5`, Expect(0))),
		batchCmd(t, putOp("Node", "fresh", `1`, nil), putOp("Node", "n-01", `1`, Expect(999))),
		mustCmd(t)(Batch{Ops: []Op{putOp("Node", "with-bad-audit", `1`, nil)}, Audit: noEntry}.Command()),
		mustCmd(t)(Batch{Ops: []Op{putOp("Node", "audited", `1`, nil)}, Audit: audit}.Command()),
		mustCmd(t)(Batch{Ops: []Op{{}}, Audit: audit}.Command()),
		mustCmd(t)(Batch{Ops: []Op{putOp("Node", "dup-audit", `1`, nil), putOp("Node", "dup-audit", `2`, nil)}, Audit: noEntry}.Command()),
		mustCmd(t)(AppendAudit{}.Command()),
		putCmd(t, "Node", "", `1`, nil),
		delCmd(t, "Node", "never", nil),
		Command{Type: "future", Schema: 1},
		Command{Type: "future", Schema: 1, Ignorable: true},
		Command{Type: TypePut, Schema: 999},
		putCmd(t, "Node", "last", `{"ok":true}`, nil),
	)
	return log
}

// TestApplyBatchMatchesApply applies one log entry by entry and in batches
// of several sizes: results, state, indexes and counts must be the same.
func TestApplyBatchMatchesApply(t *testing.T) {
	log := batchLog(t)
	kinds := []string{"Node", "KubernetesCluster", "NodeState", KindAudit}
	one := New(nil)
	var want []string
	for i, c := range log {
		before := objects(one, kinds)
		r := one.Apply(uint64(i+1), c)
		if after := objects(one, kinds); r.Err != nil && after != before {
			t.Fatalf("entry %d failed (%v) but changed the state:\n%s\n---\n%s", i+1, r.Err, before, after)
		}
		want = append(want, resultString(r))
	}
	for _, size := range []int{2, 3, 7, 64} {
		t.Run(fmt.Sprintf("batches of %d", size), func(t *testing.T) {
			s := New(nil)
			var got []string
			for from := 0; from < len(log); from += size {
				var entries []Entry
				for i := from; i < min(from+size, len(log)); i++ {
					entries = append(entries, Entry{Index: uint64(i + 1), Cmd: log[i]})
				}
				for _, r := range s.ApplyBatch(entries) {
					got = append(got, resultString(r))
				}
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("entry %d: batched %s, one by one %s", i+1, got[i], want[i])
				}
			}
			if a, b := s.Snapshot().Bytes(), one.Snapshot().Bytes(); !bytes.Equal(a, b) {
				t.Fatalf("states differ:\n%s\n---\n%s", a, b)
			}
			if s.LastIndex() != one.LastIndex() {
				t.Fatalf("LastIndex %d, want %d", s.LastIndex(), one.LastIndex())
			}
			for _, k := range kinds {
				if s.KindIndex(k) != one.KindIndex(k) || s.Count(k) != one.Count(k) {
					t.Fatalf("%s: index %d count %d, want %d %d", k, s.KindIndex(k), s.Count(k), one.KindIndex(k), one.Count(k))
				}
			}
		})
	}
}

// TestAuditTrimInBatches: entries appended in batches are trimmed as when
// appended one by one.
func TestAuditTrimInBatches(t *testing.T) {
	s := New(nil)
	total := AuditRetain + 70
	var entries []Entry
	for i := 1; i <= total; i++ {
		entries = append(entries, Entry{Index: uint64(i), Cmd: mustCmd(t)(AppendAudit{Entry: json.RawMessage(`{}`)}.Command())})
		if len(entries) == 64 || i == total {
			for _, r := range s.ApplyBatch(entries) {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
			}
			entries = nil
		}
	}
	list := s.List(KindAudit)
	if s.Count(KindAudit) != AuditRetain || len(list) != AuditRetain {
		t.Fatalf("Count = %d, listed %d, want %d", s.Count(KindAudit), len(list), AuditRetain)
	}
	if list[0].Name != AuditName(71) || list[len(list)-1].Name != AuditName(uint64(total)) {
		t.Fatalf("kept %s..%s", list[0].Name, list[len(list)-1].Name)
	}
}

func resultString(r Result) string {
	if r.Err == nil {
		return fmt.Sprintf("%d ok", r.Index)
	}
	return fmt.Sprintf("%d %s: %v", r.Index, ErrorCode(r.Err), r.Err)
}

// objects lists every object of kinds with its indexes and data.
func objects(s *State, kinds []string) string {
	var b bytes.Buffer
	for _, k := range kinds {
		for _, o := range s.List(k) {
			fmt.Fprintf(&b, "%s/%s@%d:%d=%s\n", o.Kind, o.Name, o.CreateIndex, o.ModifyIndex, o.Data)
		}
	}
	return b.String()
}

// TestCompactData: valid JSON is kept as it is exactly when json.Compact
// would not change it.
func TestCompactData(t *testing.T) {
	for _, in := range []string{
		`{"a":1}`, `{ "a":1}`, `{"a b":"c d"}`, `{"a":"\" "}`, `{"a":"\\"}`, `{"a":"\\", "b":1}`,
		`["\\\"", 1 ]`, "\"tab\\t\"", "[1,\n2]", `"x"`, ` 1`, `null`,
	} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(in)); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, err := compactData(json.RawMessage(in))
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("compactData(%s) = %s, %v; want %s", in, got, err, want.Bytes())
		}
		if kept := isCompact([]byte(in)); kept != (want.String() == in) {
			t.Fatalf("isCompact(%s) = %v", in, kept)
		}
	}
}
