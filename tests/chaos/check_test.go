package chaos

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func u(n uint64) *uint64 { return &n }

// TestCheckerFlagsStaleRead feeds a read that returns the old value after
// a write was acknowledged and before anything else ran: not
// linearizable, and the failure names a directory with both files.
func TestCheckerFlagsStaleRead(t *testing.T) {
	t.Setenv(OutEnv, t.TempDir())
	ops := []Op{
		{Client: 0, Kind: KindPut, Key: "k", Value: "a", Call: 0, Return: 10, Outcome: OK, Index: 5},
		{Client: 0, Kind: KindPut, Key: "k", Value: "b", Call: 20, Return: 30, Outcome: OK, Index: 7},
		{Client: 1, Kind: KindRead, Key: "k", Call: 40, Return: 50, Outcome: OK, Found: true, Got: "a", Index: 5},
	}
	err := Check("stale", ops)
	if !errors.Is(err, ErrNotLinearizable) {
		t.Fatalf("Check = %v, want ErrNotLinearizable", err)
	}
	dir := strings.TrimSpace(err.Error()[strings.LastIndex(err.Error(), " in ")+len(" in "):])
	for _, f := range []string{"history.json", "visualization.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s in %s: %v", f, dir, err)
		}
	}
	// The same read overlapping the write is fine.
	ops[2].Call = 25
	if err := Check("overlap", ops); err != nil {
		t.Fatalf("overlapping read: %v", err)
	}
}

// TestCheckerModelsUnknownWrites: an unknown write may show up later (or
// never), but an acknowledged delete followed by a read of its value is
// still flagged.
func TestCheckerModelsUnknownWrites(t *testing.T) {
	t.Setenv(OutEnv, t.TempDir())
	ops := []Op{
		{Client: 0, Kind: KindPut, Key: "k", Value: "a", Call: 0, Return: 10, Outcome: Unknown},
		{Client: 1, Kind: KindRead, Key: "k", Call: 20, Return: 30, Outcome: OK},
		{Client: 1, Kind: KindRead, Key: "k", Call: 40, Return: 50, Outcome: OK, Found: true, Got: "a", Index: 3},
	}
	if err := Check("unknown-seen", ops); err != nil {
		t.Fatalf("unknown write seen late: %v", err)
	}
	ops = append(ops[:1], Op{Client: 1, Kind: KindRead, Key: "k", Call: 20, Return: 30, Outcome: OK})
	if err := Check("unknown-never", ops); err != nil {
		t.Fatalf("unknown write never seen: %v", err)
	}
	ops = []Op{
		{Client: 0, Kind: KindPut, Key: "k", Value: "a", Call: 0, Return: 10, Outcome: OK, Index: 3},
		{Client: 0, Kind: KindDelete, Key: "k", Call: 20, Return: 30, Outcome: OK, Index: 4},
		{Client: 1, Kind: KindRead, Key: "k", Call: 40, Return: 50, Outcome: OK, Found: true, Got: "a", Index: 3},
	}
	if err := Check("lost-delete", ops); !errors.Is(err, ErrNotLinearizable) {
		t.Fatalf("read after delete: %v, want ErrNotLinearizable", err)
	}
}

// TestCheckerCAS: a CAS on the index of the current write succeeds, one
// on an older index conflicts; the reverse is flagged.
func TestCheckerCAS(t *testing.T) {
	t.Setenv(OutEnv, t.TempDir())
	good := []Op{
		{Client: 0, Kind: KindPut, Key: "k", Value: "a", Call: 0, Return: 10, Outcome: OK, Index: 3},
		{Client: 0, Kind: KindCAS, Key: "k", Value: "b", Expect: u(3), Call: 20, Return: 30, Outcome: OK, Index: 6},
		{Client: 1, Kind: KindCAS, Key: "k", Value: "c", Expect: u(3), Call: 40, Return: 50, Outcome: Fail, Conflict: true},
		{Client: 1, Kind: KindCAS, Key: "k", Value: "d", Expect: u(0), Call: 60, Return: 70, Outcome: Fail, Conflict: true},
	}
	if err := Check("cas-good", good); err != nil {
		t.Fatalf("good CAS history: %v", err)
	}
	bad := append([]Op{}, good...)
	bad[2].Outcome, bad[2].Conflict, bad[2].Index = OK, false, 8
	if err := Check("cas-bad", bad); !errors.Is(err, ErrNotLinearizable) {
		t.Fatalf("CAS on a replaced index succeeded: %v, want ErrNotLinearizable", err)
	}
}

// TestCheckerWeakStaleReads: stale reads may lag but not invent values,
// and an index may name only one value.
func TestCheckerWeakStaleReads(t *testing.T) {
	t.Setenv(OutEnv, t.TempDir())
	ops := []Op{
		{Client: 0, Kind: KindPut, Key: "k", Value: "a", Call: 0, Return: 10, Outcome: OK, Index: 3},
		{Client: 0, Kind: KindPut, Key: "k", Value: "b", Call: 20, Return: 30, Outcome: OK, Index: 5},
		{Client: 1, Kind: KindStaleRead, Key: "k", Call: 40, Return: 50, Outcome: OK, Found: true, Got: "a", Index: 3, Replica: "r1"},
	}
	if err := Check("stale-lag", ops); err != nil {
		t.Fatalf("lagging stale read: %v", err)
	}
	ops[2].Got, ops[2].Index = "zzz", 9
	if err := Check("phantom", ops); !errors.Is(err, ErrPhantomRead) {
		t.Fatalf("phantom stale read: %v, want ErrPhantomRead", err)
	}
	ops[2].Got, ops[2].Index = "a", 5
	if err := Check("index", ops); !errors.Is(err, ErrIndexMismatch) {
		t.Fatalf("index naming two values: %v, want ErrIndexMismatch", err)
	}
}

// TestRecorderFullAtBound: the recorder says full at exactly its maximum.
func TestRecorderFullAtBound(t *testing.T) {
	r := NewRecorder(2)
	r.Add(Op{Kind: KindRead})
	if r.Full() {
		t.Fatal("full below the bound")
	}
	r.Add(Op{Kind: KindRead})
	if !r.Full() {
		t.Fatal("not full at the bound")
	}
	if n := len(r.History()); n != 2 {
		t.Fatalf("history has %d operations, want 2", n)
	}
}
