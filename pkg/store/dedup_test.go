package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// stamp returns a leader time stamp sec seconds and frac nanoseconds after
// 2026-12-01T00:00:00Z, as the leader writes it.
func stamp(sec, frac int64) string {
	s := fmt.Sprintf("2026-12-01T%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	if frac != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%09d", frac), "0")
	}
	return s + "Z"
}

// withReq stamps cmd with a caller, request id and leader time.
func withReq(cmd Command, caller, id, at string) Command {
	cmd.Caller, cmd.RequestID, cmd.Time = caller, id, at
	return cmd
}

func TestRepeatedRequestGetsTheFirstResult(t *testing.T) {
	s := New(nil)
	create := withReq(putCmd(t, "Item", "a", `{"v":1}`, Expect(0)), "cluster-admin/alice", "req-0000000000000001", stamp(0, 0))
	first := s.Apply(1, create)
	if first.Err != nil || first.Replayed {
		t.Fatalf("first apply = %+v", first)
	}
	again := s.Apply(2, create)
	if again.Err != nil || again.Index != 1 || !again.Replayed {
		t.Fatalf("repeat = %+v, want index 1, no error, replayed", again)
	}
	if o, _ := s.Get("Item", "a"); o.ModifyIndex != 1 {
		t.Fatalf("object modified by the repeat: %+v", o)
	}

	// A refused request is refused the same way on a repeat, even when it
	// would now succeed.
	bad := withReq(putCmd(t, "Item", "b", `{}`, Expect(7)), "cluster-admin/alice", "req-0000000000000002", stamp(1, 0))
	r1 := s.Apply(3, bad)
	if !errors.Is(r1.Err, ErrConflict) {
		t.Fatalf("cas put = %v, want conflict", r1.Err)
	}
	s.Apply(4, putCmd(t, "Item", "b", `{}`, nil))
	r2 := s.Apply(5, bad)
	if !errors.Is(r2.Err, ErrConflict) || r2.Err.Error() != r1.Err.Error() || r2.Index != 3 || !r2.Replayed {
		t.Fatalf("repeat of refused put = %+v, want the first refusal %+v", r2, r1)
	}

	// The same id from another caller is another request.
	other := withReq(putCmd(t, "Item", "a", `{"v":2}`, nil), "cluster-admin/mallory", "req-0000000000000001", stamp(2, 0))
	if r := s.Apply(6, other); r.Err != nil || r.Replayed || r.Index != 6 {
		t.Fatalf("other caller's request = %+v, want applied at 6", r)
	}
	if got, ok := s.Recent("cluster-admin/alice", "req-0000000000000001"); !ok || got.Index != 1 {
		t.Fatalf("Recent = %+v, %v", got, ok)
	}
}

func TestRequestIDReusedForAnotherObjectIsRefused(t *testing.T) {
	s := New(nil)
	s.Apply(1, withReq(putCmd(t, "Item", "a", `{}`, nil), "c", "req-0000000000000001", stamp(0, 0)))
	// The same objects with other data and conditions are a retry.
	if r := s.Apply(2, withReq(putCmd(t, "Item", "a", `{"v":2}`, Expect(0)), "c", "req-0000000000000001", stamp(0, 0))); !r.Replayed || r.Index != 1 {
		t.Fatalf("retry with other data = %+v, want replayed", r)
	}
	for i, cmd := range []Command{
		putCmd(t, "Item", "b", `{}`, nil),
		delCmd(t, "Item", "a", nil),
		batchCmd(t, putOp("Item", "a", `{}`, nil), putOp("Item", "b", `{}`, nil)),
	} {
		r := s.Apply(uint64(3+i), withReq(cmd, "c", "req-0000000000000001", stamp(0, 0)))
		if !errors.Is(r.Err, ErrInvalid) || r.Replayed {
			t.Errorf("reuse %d = %+v, want ErrInvalid", i, r)
		}
	}
	if _, ok := s.Get("Item", "b"); ok {
		t.Fatal("a reused id wrote another object")
	}
	if o, _ := s.Get("Item", "a"); o.ModifyIndex != 1 {
		t.Fatalf("a reused id changed the first object: %+v", o)
	}
}

func TestTwoCopiesInOneBatchApplyOnce(t *testing.T) {
	s := New(nil)
	cmd := withReq(putCmd(t, "Item", "a", `{}`, nil), "c", "req-0000000000000001", stamp(0, 0))
	res := s.ApplyBatch([]Entry{{Index: 1, Cmd: cmd}, {Index: 2, Cmd: cmd}})
	if res[0].Replayed || !res[1].Replayed || res[1].Index != 1 {
		t.Fatalf("results = %+v", res)
	}
	if o, _ := s.Get("Item", "a"); o.ModifyIndex != 1 {
		t.Fatalf("second copy applied: %+v", o)
	}
}

func TestRequestTableKeepsDedupRetain(t *testing.T) {
	s := New(nil)
	at := stamp(0, 0)
	entries := make([]Entry, 0, DedupRetain+1)
	for i := range DedupRetain + 1 {
		cmd := withReq(putCmd(t, "Item", "x", `{}`, nil), "c", fmt.Sprintf("req-%016d", i), at)
		entries = append(entries, Entry{Index: uint64(i + 1), Cmd: cmd})
	}
	s.ApplyBatch(entries[:DedupRetain])
	if n := s.RecentCount(); n != DedupRetain {
		t.Fatalf("%d requests remembered, want %d", n, DedupRetain)
	}
	if _, ok := s.Recent("c", "req-0000000000000000"); !ok {
		t.Fatal("oldest request forgotten at the bound")
	}
	s.ApplyBatch(entries[DedupRetain:])
	if n := s.RecentCount(); n != DedupRetain {
		t.Fatalf("%d requests remembered past the bound, want %d", n, DedupRetain)
	}
	if _, ok := s.Recent("c", "req-0000000000000000"); ok {
		t.Fatal("oldest request kept past the bound")
	}
	if _, ok := s.Recent("c", fmt.Sprintf("req-%016d", DedupRetain)); !ok {
		t.Fatal("newest request forgotten")
	}
}

func TestRequestTableForgetsAfterDedupMaxAge(t *testing.T) {
	s := New(nil)
	const sec = int64(1_000_000_000)
	first := withReq(putCmd(t, "Item", "a", `{}`, nil), "c", "req-0000000000000001", stamp(10, 0))
	s.Apply(1, first)
	maxAge := DedupMaxAge / sec
	// Exactly DedupMaxAge later the request is still remembered.
	s.Apply(2, withReq(putCmd(t, "Item", "b", `{}`, nil), "", "", stamp(10+maxAge, 0)))
	if r := s.Apply(3, withReq(first, "c", "req-0000000000000001", stamp(10+maxAge, 0))); !r.Replayed {
		t.Fatalf("request forgotten at DedupMaxAge: %+v", r)
	}
	// One nanosecond past it, a later command makes the state forget it.
	s.Apply(4, withReq(putCmd(t, "Item", "b", `{}`, nil), "", "", stamp(10+maxAge, 1)))
	if _, ok := s.Recent("c", "req-0000000000000001"); ok {
		t.Fatal("request kept past DedupMaxAge")
	}
	if r := s.Apply(5, first); r.Replayed || r.Err != nil {
		t.Fatalf("forgotten request = %+v, want applied again", r)
	}
}

func TestStampNanos(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1970-01-01T00:00:00Z", 0, true},
		{"1970-01-02T00:00:01.5Z", 86401_500_000_000, true},
		{"2000-03-01T00:00:00Z", 951868800 * 1_000_000_000, true},
		{"2026-12-01T15:04:05.123456789Z", 1796137445_123456789, true},
		{"2026-12-01T15:04:05+01:00", 0, false},
		{"2026-13-01T15:04:05Z", 0, false},
		{"2026-12-01T15:04:05.Z", 0, false},
		{"2026-12-01T15:04:05.1234567890Z", 0, false},
		{"t0", 0, false},
		{"", 0, false},
	} {
		got, ok := stampNanos(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("stampNanos(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRequestTableSnapshotRoundTrip(t *testing.T) {
	s := New(nil)
	for i := range 5 {
		cmd := withReq(putCmd(t, "Item", fmt.Sprintf("i%d", i), `{}`, Expect(0)), "c", fmt.Sprintf("req-%016d", i%4), stamp(int64(i), 0))
		s.Apply(uint64(i+1), cmd)
	}
	snap := s.Snapshot().Bytes()
	r := mustRestore(t, snap)
	if !bytes.Equal(r.Snapshot().Bytes(), snap) {
		t.Fatalf("restored snapshot differs:\n%s\n---\n%s", r.Snapshot().Bytes(), snap)
	}
	if r.RecentCount() != 4 {
		t.Fatalf("%d requests restored, want 4", r.RecentCount())
	}
	// The restored state answers repeats like the original one.
	for i := range 4 {
		id := fmt.Sprintf("req-%016d", i)
		a, aok := s.Recent("c", id)
		b, bok := r.Recent("c", id)
		if !aok || !bok || a.Index != b.Index || ErrorCode(a.Err) != ErrorCode(b.Err) {
			t.Fatalf("%s: original %+v %v, restored %+v %v", id, a, aok, b, bok)
		}
	}
	// Applying the same command to both keeps them identical.
	cmd := withReq(putCmd(t, "Item", "i0", `{}`, Expect(0)), "c", "req-0000000000000000", stamp(9, 0))
	if ra, rb := s.Apply(6, cmd), r.Apply(6, cmd); ra.Index != 1 || rb.Index != 1 || !ra.Replayed || !rb.Replayed {
		t.Fatalf("results differ: %+v vs %+v", ra, rb)
	}
	if !bytes.Equal(s.Snapshot().Bytes(), r.Snapshot().Bytes()) {
		t.Fatal("states differ after the same command")
	}
}

func TestSchema1SnapshotRestores(t *testing.T) {
	s := New(nil)
	s.Apply(1, putCmd(t, "Item", "a", `{"v":1}`, nil))
	s.Apply(2, withReq(putCmd(t, "Item", "b", `{}`, nil), "c", "req-0000000000000001", stamp(0, 0)))
	snap := s.Snapshot().Bytes()
	lines := bytes.SplitAfter(snap, []byte("\n"))
	var h SnapshotHeader
	if err := json.Unmarshal(lines[0], &h); err != nil {
		t.Fatal(err)
	}
	// A schema 1 writer wrote the header without requests and no records.
	h.Schema, h.Requests = 1, 0
	hb, _ := json.Marshal(h)
	old := append(append(hb, '\n'), bytes.Join(lines[1:1+h.Objects], nil)...)
	if bytes.Contains(old, []byte("requests")) || bytes.Contains(old, []byte("req-")) {
		t.Fatalf("schema 1 snapshot still mentions requests: %s", old)
	}
	r := mustRestore(t, old)
	if got, want := dump(r, "Item"), dump(s, "Item"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("objects = %v, want %v", got, want)
	}
	if r.RecentCount() != 0 {
		t.Fatalf("schema 1 snapshot restored %d requests", r.RecentCount())
	}

	// A schema 1 header that claims requests is refused.
	h.Requests = 1
	hb, _ = json.Marshal(h)
	bad := append(append(hb, '\n'), bytes.Join(lines[1:], nil)...)
	if err := New(nil).Restore(bytes.NewReader(bad)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("restore schema 1 with requests = %v, want ErrInvalid", err)
	}
}

func TestRestoreRefusesBadRequestRecords(t *testing.T) {
	s := New(nil)
	s.Apply(1, withReq(putCmd(t, "Item", "a", `{}`, nil), "c", "req-0000000000000001", stamp(0, 0)))
	s.Apply(2, withReq(putCmd(t, "Item", "b", `{}`, nil), "c", "req-0000000000000002", stamp(0, 0)))
	snap := string(s.Snapshot().Bytes())
	for name, mangled := range map[string]string{
		"out of order": strings.Replace(snap, `"index":2`, `"index":1`, 1),
		"repeated id":  strings.Replace(snap, "req-0000000000000002", "req-0000000000000001", 1),
		"empty id":     strings.Replace(snap, `"requestId":"req-0000000000000002"`, `"requestId":""`, 1),
		"truncated":    snap[:strings.LastIndex(snap, `{"caller"`)],
	} {
		if err := New(nil).Restore(strings.NewReader(mangled)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: restore = %v, want ErrInvalid", name, err)
		}
	}
}

func TestRequestIDSurvivesTheWire(t *testing.T) {
	cmd := withReq(putCmd(t, "Item", "a", `{}`, nil), "cluster-admin/alice", "req-0000000000000001", stamp(0, 0))
	raw, err := cmd.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(cmd.Caller)) || !bytes.Contains(raw, []byte(cmd.RequestID)) {
		t.Fatalf("Encode = %q: caller or request id missing", raw)
	}
	back, err := DecodeCommand(raw)
	if err != nil {
		t.Fatal(err)
	}
	if back.Caller != cmd.Caller || back.RequestID != cmd.RequestID {
		t.Fatalf("decoded caller %q id %q", back.Caller, back.RequestID)
	}
	if r := New(nil).Apply(1, withReq(putCmd(t, "Item", "a", `{}`, nil), "c", "bad\x00id-000000000", "")); !errors.Is(r.Err, ErrInvalid) {
		t.Fatalf("id with NUL = %v, want ErrInvalid", r.Err)
	}
}
