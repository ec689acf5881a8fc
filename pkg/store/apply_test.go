package store

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/version"
)

func TestApply(t *testing.T) {
	const K = "Node"
	sealed := `{"alg":"AES-256-GCM","nonce":"AAAA","ciphertext":"AQID"}`
	tests := []struct {
		name    string
		setup   func(t *testing.T) []Command
		cmd     func(t *testing.T) Command
		wantErr error
		want    []string // dump(K) after the command
		kind    string   // dump this kind instead of K when set
	}{
		{
			name:  "put creates",
			cmd:   func(t *testing.T) Command { return putCmd(t, K, "a", `{ "x" : 1 }`, nil) },
			want:  []string{`Node/a@1:1={"x":1}`},
			setup: nil,
		},
		{
			name:  "put replaces and keeps create index",
			setup: func(t *testing.T) []Command { return []Command{putCmd(t, K, "a", `1`, nil)} },
			cmd:   func(t *testing.T) Command { return putCmd(t, K, "a", `2`, nil) },
			want:  []string{`Node/a@1:2=2`},
		},
		{
			name:  "put cas absent ok",
			cmd:   func(t *testing.T) Command { return putCmd(t, K, "a", `1`, Expect(0)) },
			want:  []string{`Node/a@1:1=1`},
			setup: nil,
		},
		{
			name:    "put cas absent conflicts with existing",
			setup:   func(t *testing.T) []Command { return []Command{putCmd(t, K, "a", `1`, nil)} },
			cmd:     func(t *testing.T) Command { return putCmd(t, K, "a", `2`, Expect(0)) },
			wantErr: ErrConflict,
			want:    []string{`Node/a@1:1=1`},
		},
		{
			name:  "put cas index ok",
			setup: func(t *testing.T) []Command { return []Command{putCmd(t, K, "a", `1`, nil)} },
			cmd:   func(t *testing.T) Command { return putCmd(t, K, "a", `2`, Expect(1)) },
			want:  []string{`Node/a@1:2=2`},
		},
		{
			name: "put cas stale index conflicts",
			setup: func(t *testing.T) []Command {
				return []Command{putCmd(t, K, "a", `1`, nil), putCmd(t, K, "a", `2`, nil)}
			},
			cmd:     func(t *testing.T) Command { return putCmd(t, K, "a", `3`, Expect(1)) },
			wantErr: ErrConflict,
			want:    []string{`Node/a@1:2=2`},
		},
		{
			name:    "put cas index on missing conflicts",
			cmd:     func(t *testing.T) Command { return putCmd(t, K, "a", `3`, Expect(5)) },
			wantErr: ErrConflict,
		},
		{
			name: "put invalid json",
			cmd: func(t *testing.T) Command {
				return Command{Type: TypePut, Schema: 1, Payload: json.RawMessage(`{"kind":"Node","name":"a","data":{`)}
			},
			wantErr: ErrInvalid,
		},
		{
			name: "put unknown payload field",
			cmd: func(t *testing.T) Command {
				return Command{Type: TypePut, Schema: 1, Payload: json.RawMessage(`{"kind":"Node","name":"a","data":1,"bogus":1}`)}
			},
			wantErr: ErrInvalid,
		},
		{
			name:    "put empty name",
			cmd:     func(t *testing.T) Command { return putCmd(t, K, "", `1`, nil) },
			wantErr: ErrInvalid,
		},
		{
			name: "put missing data",
			cmd: func(t *testing.T) Command {
				return Command{Type: TypePut, Schema: 1, Payload: json.RawMessage(`{"kind":"Node","name":"a"}`)}
			},
			wantErr: ErrInvalid,
		},
		{
			name:    "secret must be sealed",
			cmd:     func(t *testing.T) Command { return putCmd(t, KindSecret, "ca", `{"key":"PRIVATE"}`, nil) },
			wantErr: ErrNotSealed,
			kind:    KindSecret,
		},
		{
			name: "sealed secret stored",
			cmd:  func(t *testing.T) Command { return putCmd(t, KindSecret, "ca", sealed, nil) },
			want: []string{`Secret/ca@1:1=` + sealed},
			kind: KindSecret,
		},
		{
			name: "delete",
			setup: func(t *testing.T) []Command {
				return []Command{putCmd(t, K, "a", `1`, nil), putCmd(t, K, "b", `1`, nil)}
			},
			cmd:  func(t *testing.T) Command { return delCmd(t, K, "a", nil) },
			want: []string{`Node/b@2:2=1`},
		},
		{
			name:    "delete missing",
			cmd:     func(t *testing.T) Command { return delCmd(t, K, "a", nil) },
			wantErr: ErrNotFound,
		},
		{
			name:    "delete cas conflict",
			setup:   func(t *testing.T) []Command { return []Command{putCmd(t, K, "a", `1`, nil)} },
			cmd:     func(t *testing.T) Command { return delCmd(t, K, "a", Expect(7)) },
			wantErr: ErrConflict,
			want:    []string{`Node/a@1:1=1`},
		},
		{
			name:  "delete cas ok",
			setup: func(t *testing.T) []Command { return []Command{putCmd(t, K, "a", `1`, nil)} },
			cmd:   func(t *testing.T) Command { return delCmd(t, K, "a", Expect(1)) },
		},
		{
			name:  "batch applies in order",
			setup: func(t *testing.T) []Command { return []Command{putCmd(t, K, "a", `1`, nil)} },
			cmd: func(t *testing.T) Command {
				return batchCmd(t, putOp(K, "b", `2`, Expect(0)), putOp(K, "b", `3`, Expect(2)), delOp(K, "a", Expect(1)), putOp(K, "c", `4`, nil))
			},
			want: []string{`Node/b@2:2=3`, `Node/c@2:2=4`},
		},
		{
			name:  "batch is atomic on conflict",
			setup: func(t *testing.T) []Command { return []Command{putCmd(t, K, "a", `1`, nil)} },
			cmd: func(t *testing.T) Command {
				return batchCmd(t, putOp(K, "b", `2`, nil), delOp(K, "a", nil), putOp(K, "c", `3`, Expect(9)))
			},
			wantErr: ErrConflict,
			want:    []string{`Node/a@1:1=1`},
		},
		{
			name:  "batch is atomic on missing delete",
			setup: func(t *testing.T) []Command { return []Command{putCmd(t, K, "a", `1`, nil)} },
			cmd: func(t *testing.T) Command {
				return batchCmd(t, putOp(K, "a", `2`, nil), delOp(K, "zz", nil))
			},
			wantErr: ErrNotFound,
			want:    []string{`Node/a@1:1=1`},
		},
		{
			name: "batch op with both put and delete",
			cmd: func(t *testing.T) Command {
				return batchCmd(t, Op{Put: &Put{Kind: K, Name: "a", Data: json.RawMessage(`1`)}, Delete: &Delete{Kind: K, Name: "a"}})
			},
			wantErr: ErrInvalid,
		},
		{
			name: "append audit",
			cmd: func(t *testing.T) Command {
				return mustCmd(t)(AppendAudit{Entry: json.RawMessage(`{"who":"admin"}`)}.Command())
			},
			want: []string{`Audit/00000000000000000001@1:1={"who":"admin"}`},
			kind: KindAudit,
		},
		{
			name:    "unknown command",
			cmd:     func(t *testing.T) Command { return Command{Type: "frobnicate", Schema: 1} },
			wantErr: ErrUnknownCommand,
		},
		{
			name: "unknown ignorable command is skipped",
			cmd:  func(t *testing.T) Command { return Command{Type: "frobnicate", Schema: 1, Ignorable: true} },
		},
		{
			name:  "newer schema refused",
			setup: func(t *testing.T) []Command { return []Command{putCmd(t, K, "a", `1`, nil)} },
			cmd: func(t *testing.T) Command {
				c := putCmd(t, K, "a", `2`, nil)
				c.Schema = version.Schema + 1
				return c
			},
			wantErr: ErrSchemaTooNew,
			want:    []string{`Node/a@1:1=1`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(nil)
			var idx uint64
			if tt.setup != nil {
				for _, c := range tt.setup(t) {
					idx++
					if r := s.Apply(idx, c); r.Err != nil {
						t.Fatalf("setup %d: %v", idx, r.Err)
					}
				}
			}
			before := s.Snapshot().Bytes()
			idx++
			r := s.Apply(idx, tt.cmd(t))
			if r.Index != idx {
				t.Errorf("result index %d, want %d", r.Index, idx)
			}
			if !errors.Is(r.Err, tt.wantErr) || (tt.wantErr == nil) != (r.Err == nil) {
				t.Fatalf("err = %v, want %v", r.Err, tt.wantErr)
			}
			if s.LastIndex() != idx {
				t.Errorf("LastIndex %d, want %d", s.LastIndex(), idx)
			}
			kind := K
			if tt.kind != "" {
				kind = tt.kind
			}
			if got := dump(s, kind); !slices.Equal(got, tt.want) {
				t.Errorf("state:\n got %q\nwant %q", got, tt.want)
			}
			if r.Err != nil {
				// A failed command changes no object and no kind index.
				if got, want := objectsOf(t, s), objectsOf(t, mustRestore(t, before)); !slices.Equal(got, want) {
					t.Errorf("failed command changed objects:\n got %q\nwant %q", got, want)
				}
			}
		})
	}
}

func TestResultJSONKeepsSentinel(t *testing.T) {
	s := New(nil)
	r := s.Apply(1, delCmd(t, "Node", "x", nil))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Index != 1 || !errors.Is(back.Err, ErrNotFound) || back.Err.Error() != r.Err.Error() {
		t.Fatalf("round trip %s -> %+v", b, back)
	}
	if ErrorCode(r.Err) != CodeNotFound {
		t.Fatalf("code %q", ErrorCode(r.Err))
	}
}

func TestKindIndexCountsDeletes(t *testing.T) {
	s := New(nil)
	s.Apply(1, putCmd(t, "Node", "a", `1`, nil))
	s.Apply(2, putCmd(t, "Other", "a", `1`, nil))
	if got := s.KindIndex("Node"); got != 1 {
		t.Fatalf("KindIndex = %d, want 1", got)
	}
	s.Apply(3, delCmd(t, "Node", "a", nil))
	if got := s.KindIndex("Node"); got != 3 {
		t.Fatalf("KindIndex after delete = %d, want 3", got)
	}
	if got := s.KeyIndex("Node", "a"); got != 3 {
		t.Fatalf("KeyIndex of deleted = %d, want 3", got)
	}
	if got := s.Count("Node"); got != 0 {
		t.Fatalf("Count = %d", got)
	}
}

func TestListPrefixSorted(t *testing.T) {
	s := New(nil)
	for i, n := range []string{"web-2", "db-1", "web-10", "web-1", "dbx"} {
		s.Apply(uint64(i+1), putCmd(t, "Node", n, `1`, nil))
	}
	s.Apply(9, putCmd(t, "Nodes", "web-0", `1`, nil))
	var got []string
	for _, o := range s.ListPrefix("Node", "web-") {
		got = append(got, o.Name)
	}
	if want := []string{"web-1", "web-10", "web-2"}; !slices.Equal(got, want) {
		t.Fatalf("ListPrefix = %q, want %q", got, want)
	}
	if n := len(s.List("Node")); n != 5 {
		t.Fatalf("List = %d objects, want 5", n)
	}
}

func TestAuditIsTrimmedOldestFirst(t *testing.T) {
	s := New(nil)
	total := AuditRetain + 3
	for i := 1; i <= total; i++ {
		if r := s.Apply(uint64(i), mustCmd(t)(AppendAudit{Entry: json.RawMessage(`{}`)}.Command())); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if got := s.Count(KindAudit); got != AuditRetain {
		t.Fatalf("Count = %d, want %d", got, AuditRetain)
	}
	list := s.List(KindAudit)
	if list[0].Name != AuditName(4) || list[len(list)-1].Name != AuditName(uint64(total)) {
		t.Fatalf("kept %s..%s", list[0].Name, list[len(list)-1].Name)
	}
}

// TestBatchAudit: a batch's audit entry commits with its operations, named
// after the batch's index, and not at all when an operation fails.
func TestBatchAudit(t *testing.T) {
	s := New(nil)
	audit := &AppendAudit{Entry: json.RawMessage(`{"who":"alice"}`)}
	ok := mustCmd(t)(Batch{Ops: []Op{putOp("K", "a", `1`, Expect(0))}, Audit: audit}.Command())
	if res := s.Apply(5, ok); res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := dump(s, KindAudit); len(got) != 1 || got[0] != "Audit/"+AuditName(5)+"@5:5="+`{"who":"alice"}` {
		t.Fatalf("audit after a good batch = %v", got)
	}
	bad := mustCmd(t)(Batch{Ops: []Op{putOp("K", "a", `2`, Expect(0))}, Audit: audit}.Command())
	if res := s.Apply(6, bad); !errors.Is(res.Err, ErrConflict) {
		t.Fatalf("conflicting batch = %v, want ErrConflict", res.Err)
	}
	if got := dump(s, KindAudit); len(got) != 1 {
		t.Fatalf("a failed batch left its audit entry: %v", got)
	}
}
