package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/version"
)

// commandLog is a mixed log touching several kinds with CAS, batches,
// deletes, failures and audit entries.
func commandLog(t *testing.T) []Command {
	var log []Command
	for i := range 50 {
		name := fmt.Sprintf("n-%02d", i%17)
		switch i % 5 {
		case 0, 1:
			log = append(log, putCmd(t, "Node", name, fmt.Sprintf(`{"i":%d}`, i), nil))
		case 2:
			log = append(log, delCmd(t, "Node", name, nil))
		case 3:
			log = append(log, batchCmd(t, putOp("KubernetesCluster", name, `{"spec":{}}`, nil), putOp("NodeState", name, `{}`, Expect(uint64(i)))))
		case 4:
			log = append(log, mustCmd(t)(AppendAudit{Entry: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}.Command()))
		}
	}
	return log
}

func TestReplayIsDeterministic(t *testing.T) {
	log := commandLog(t)
	a, b := New(nil), New(nil)
	for i, c := range log {
		ra, rb := a.Apply(uint64(i+1), c), b.Apply(uint64(i+1), c)
		if ErrorCode(ra.Err) != ErrorCode(rb.Err) {
			t.Fatalf("entry %d: results differ: %v vs %v", i+1, ra.Err, rb.Err)
		}
	}
	sa, sb := a.Snapshot().Bytes(), b.Snapshot().Bytes()
	if !bytes.Equal(sa, sb) {
		t.Fatalf("replayed states differ:\n%s\n---\n%s", sa, sb)
	}
	// Replaying through the wire encoding gives the same state too.
	c := New(nil)
	for i, cmd := range log {
		raw, err := cmd.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeCommand(raw)
		if err != nil {
			t.Fatal(err)
		}
		c.Apply(uint64(i+1), back)
	}
	if !bytes.Equal(sa, c.Snapshot().Bytes()) {
		t.Fatal("replay through Encode/DecodeCommand differs")
	}
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	s := New(nil)
	for i, c := range commandLog(t) {
		s.Apply(uint64(i+1), c)
	}
	snap := s.Snapshot().Bytes()
	r := mustRestore(t, snap)
	if !bytes.Equal(snap, r.Snapshot().Bytes()) {
		t.Fatal("restored state snapshots differently")
	}
	for _, kind := range []string{"Node", "KubernetesCluster", "NodeState", KindAudit} {
		if r.KindIndex(kind) != s.KindIndex(kind) || r.Count(kind) != s.Count(kind) || !slices.Equal(dump(r, kind), dump(s, kind)) {
			t.Errorf("kind %s differs after restore", kind)
		}
	}
	if r.LastIndex() != s.LastIndex() {
		t.Errorf("LastIndex %d, want %d", r.LastIndex(), s.LastIndex())
	}
	// Further writes behave the same on both.
	c := putCmd(t, "Node", "n-01", `{}`, Expect(s.KeyIndex("Node", "n-01")))
	if ra, rb := s.Apply(100, c), r.Apply(100, c); ErrorCode(ra.Err) != ErrorCode(rb.Err) {
		t.Fatalf("diverged: %v vs %v", ra.Err, rb.Err)
	}
}

func TestRestoreRefuses(t *testing.T) {
	s := New(nil)
	s.Apply(1, putCmd(t, "Node", "a", `1`, nil))
	s.Apply(2, putCmd(t, "Node", "b", `1`, nil))
	good := string(s.Snapshot().Bytes())
	lines := strings.SplitAfter(good, "\n")
	newer := strings.Replace(good, fmt.Sprintf(`"schema":%d`, version.Schema), fmt.Sprintf(`"schema":%d`, version.Schema+1), 1)
	tests := []struct {
		name string
		snap string
		want error
	}{
		{"newer schema", newer, ErrSchemaTooNew},
		{"truncated", lines[0] + lines[1], ErrInvalid},
		{"trailing data", good + "{}\n", ErrInvalid},
		{"out of order", lines[0] + lines[2] + lines[1], ErrInvalid},
		{"not a snapshot", `{"format":"tar"}`, ErrInvalid},
		{"garbage", `xx`, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := New(nil)
			target.Apply(1, putCmd(t, "Keep", "me", `1`, nil))
			before := target.Snapshot().Bytes()
			err := target.Restore(strings.NewReader(tt.snap))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Restore = %v, want %v", err, tt.want)
			}
			if !bytes.Equal(before, target.Snapshot().Bytes()) {
				t.Fatal("refused restore changed the state")
			}
		})
	}
	if _, err := ReadSnapshotHeader(strings.NewReader(newer)); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("ReadSnapshotHeader = %v", err)
	}
}
