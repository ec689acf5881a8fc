package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"kcore.dev/kcore/pkg/version"
)

// TestClusterSchemaAtTheBounds: the cluster writes the lowest schema its
// members read, never newer than this build and never older than
// MinWriteSchema; an unknown reader (0) counts as MinWriteSchema.
func TestClusterSchemaAtTheBounds(t *testing.T) {
	tests := []struct {
		reads []int
		want  int
	}{
		{nil, version.Schema},
		{[]int{version.Schema}, version.Schema},
		{[]int{version.Schema + 1}, version.Schema},
		{[]int{version.Schema, version.Schema + 1}, version.Schema},
		{[]int{version.Schema - 1, version.Schema}, version.Schema - 1},
		{[]int{MinWriteSchema}, MinWriteSchema},
		{[]int{MinWriteSchema - 1}, MinWriteSchema},
		{[]int{0}, MinWriteSchema},
		{[]int{-1}, MinWriteSchema},
		{[]int{version.Schema, 0, version.Schema}, MinWriteSchema},
	}
	for _, tt := range tests {
		if got := ClusterSchema(tt.reads); got != tt.want {
			t.Errorf("ClusterSchema(%v) = %d, want %d", tt.reads, got, tt.want)
		}
	}
	if MinWriteSchema > version.Schema || SchemaBinary > version.Schema || MinWriteSchema >= SchemaBinary {
		t.Fatalf("MinWriteSchema %d, SchemaBinary %d, version.Schema %d out of order", MinWriteSchema, SchemaBinary, version.Schema)
	}
}

// recordMember stores a Member object recording schema for id (no schema
// field at all when schema is 0).
func recordMember(t *testing.T, s *State, index uint64, id string, schema int) {
	t.Helper()
	data := `{"raftAddr":"x"}`
	if schema != 0 {
		data = fmt.Sprintf(`{"raftAddr":"x","schema":%d}`, schema)
	}
	if r := s.Apply(index, putCmd(t, KindMember, id, data, nil)); r.Err != nil {
		t.Fatal(r.Err)
	}
}

// TestWriteSchemaFromMembers: the schema is computed from the recorded
// Member objects, for the listed servers (an unrecorded one is an unknown
// reader) or for every record.
func TestWriteSchemaFromMembers(t *testing.T) {
	s := New(nil)
	if got := s.WriteSchema(nil); got != version.Schema {
		t.Fatalf("no records: %d, want %d", got, version.Schema)
	}
	if got := s.WriteSchema([]string{"a", "b"}); got != version.Schema {
		t.Fatalf("no records, two servers: %d, want %d", got, version.Schema)
	}
	recordMember(t, s, 1, "a", version.Schema)
	if got := s.WriteSchema(nil); got != version.Schema {
		t.Fatalf("a records %d: %d", version.Schema, got)
	}
	if got := s.WriteSchema([]string{"a", "new"}); got != MinWriteSchema {
		t.Fatalf("an unrecorded server: %d, want %d", got, MinWriteSchema)
	}
	recordMember(t, s, 2, "b", MinWriteSchema)
	if got := s.WriteSchema(nil); got != MinWriteSchema {
		t.Fatalf("b records %d: %d", MinWriteSchema, got)
	}
	if got := s.WriteSchema([]string{"a"}); got != version.Schema {
		t.Fatalf("only a is a server: %d, want %d", got, version.Schema)
	}
	recordMember(t, s, 3, "b", version.Schema)
	recordMember(t, s, 4, "c", 0)
	if got := s.WriteSchema(nil); got != MinWriteSchema {
		t.Fatalf("c records no schema: %d, want %d", got, MinWriteSchema)
	}
	if r := s.Apply(5, putCmd(t, KindMember, "c", `"not an object"`, nil)); r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := s.WriteSchema(nil); got != MinWriteSchema {
		t.Fatalf("c's record unreadable: %d, want %d", got, MinWriteSchema)
	}
	if r := s.Apply(6, delCmd(t, KindMember, "c", nil)); r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := s.WriteSchema(nil); got != version.Schema {
		t.Fatalf("every record %d: %d", version.Schema, got)
	}
}

// TestLimitReadsBounds: a state reads at most what this build reads and at
// least schema 1.
func TestLimitReadsBounds(t *testing.T) {
	for _, bad := range []int{0, -1, version.Schema + 1} {
		if err := New(nil).LimitReads(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("LimitReads(%d) = %v, want ErrInvalid", bad, err)
		}
	}
	for _, ok := range []int{1, version.Schema} {
		if err := New(nil).LimitReads(ok); err != nil {
			t.Errorf("LimitReads(%d) = %v", ok, err)
		}
	}
}

// TestSnapshotCarriesClusterSchema: a snapshot is stamped with the schema
// the cluster writes, so a member that reads only MinWriteSchema restores
// it while one records that schema, and refuses it once every member
// records version.Schema.
func TestSnapshotCarriesClusterSchema(t *testing.T) {
	s := New(nil)
	recordMember(t, s, 1, "new", version.Schema)
	recordMember(t, s, 2, "old", MinWriteSchema)
	s.Apply(3, putCmd(t, "Node", "a", `{"x":1}`, nil))
	snap := s.Snapshot()
	if got := snap.Header().Schema; got != MinWriteSchema {
		t.Fatalf("snapshot schema %d, want %d", got, MinWriteSchema)
	}
	old := New(nil)
	if err := old.LimitReads(MinWriteSchema); err != nil {
		t.Fatal(err)
	}
	if err := old.Restore(bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatalf("old reader restores: %v", err)
	}
	if !bytes.Equal(old.Snapshot().Bytes(), snap.Bytes()) {
		t.Fatal("restored state differs")
	}

	recordMember(t, s, 4, "old", version.Schema)
	if got := s.Snapshot().Header().Schema; got != version.Schema {
		t.Fatalf("snapshot schema %d, want %d", got, version.Schema)
	}
	if err := old.Restore(bytes.NewReader(s.Snapshot().Bytes())); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("old reader restores a schema %d snapshot: %v, want ErrSchemaTooNew", version.Schema, err)
	}

	newer := putCmd(t, "Node", "b", `1`, nil)
	if r := old.Apply(5, newer); !errors.Is(r.Err, ErrSchemaTooNew) {
		t.Fatalf("old reader applies a schema %d entry: %v, want ErrSchemaTooNew", newer.Schema, r.Err)
	}
	newer.Schema = MinWriteSchema
	if r := old.Apply(6, newer); r.Err != nil {
		t.Fatalf("old reader applies a schema %d entry: %v", MinWriteSchema, r.Err)
	}
}

// TestJSONFormRoundTrip encodes every command type and payload at schema
// 2: the bytes are those schema 2 builds wrote (oldJSONWire), and
// DecodeCommand reads them back to the same command, whose binary form is
// that of the original.
func TestJSONFormRoundTrip(t *testing.T) {
	put := Put{Kind: "Node", Name: "a<&>\"\\\u2028é", Data: json.RawMessage(`{ "x" : "<b>" }`)}
	tests := []struct {
		name    string
		typ     string
		payload any
		edit    func(c *Command)
	}{
		{"put", TypePut, put, func(*Command) {}},
		{"put stamped", TypePut, put, func(c *Command) { c.Time, c.ID = "2026-11-30T00:00:00.123456789Z", "0123abcd" }},
		{"put with request id", TypePut, put, func(c *Command) { c.Caller, c.RequestID = "cluster-admin:x\u00e9<", "r-1" }},
		{"put without data", TypePut, Put{Kind: "Node", Name: "b"}, func(*Command) {}},
		{"put cas create", TypePut, Put{Kind: "Node", Name: "b", Data: json.RawMessage(`2`), ExpectModifyIndex: Expect(0)}, func(*Command) {}},
		{"put cas", TypePut, Put{Kind: "Node", Name: "s", Data: json.RawMessage(`2`), ExpectModifyIndex: Expect(1 << 62)}, func(*Command) {}},
		{"delete", TypeDelete, Delete{Kind: "Node", Name: "s", ExpectModifyIndex: Expect(1)}, func(*Command) {}},
		{"delete unconditional", TypeDelete, Delete{Kind: "Node", Name: "zz"}, func(*Command) {}},
		{"batch with audit", TypeBatch, Batch{Ops: []Op{{Put: &put}, {Delete: &Delete{Kind: "Node", Name: "s"}}}, Audit: &AppendAudit{Entry: json.RawMessage(`{"result": 200}`)}}, func(*Command) {}},
		{"batch op with both", TypeBatch, Batch{Ops: []Op{{Put: &put, Delete: &Delete{Kind: "Node", Name: "s"}}}}, func(*Command) {}},
		{"batch audit without entry", TypeBatch, Batch{Ops: []Op{}, Audit: &AppendAudit{}}, func(*Command) {}},
		{"empty batch", TypeBatch, Batch{}, func(*Command) {}},
		{"append audit", TypeAppendAudit, AppendAudit{Entry: json.RawMessage(`{"result":403}`)}, func(*Command) {}},
		{"append audit without entry", TypeAppendAudit, AppendAudit{}, func(*Command) {}},
		{"ignorable unknown type", "later", map[string]int{"x": 1}, func(c *Command) { c.Ignorable = true }},
		{"unknown type", "later", map[string]int{"x": 1}, func(*Command) {}},
		{"schema 1", TypePut, put, func(c *Command) { c.Schema = 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := NewCommand(tt.typ, tt.payload)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Schema = MinWriteSchema
			tt.edit(&cmd)
			wire, err := cmd.Encode()
			if err != nil {
				t.Fatal(err)
			}
			old := oldJSONWire(t, tt.typ, tt.payload, func(c *Command) {
				c.Schema, c.Ignorable, c.Time, c.ID, c.Caller, c.RequestID = cmd.Schema, cmd.Ignorable, cmd.Time, cmd.ID, cmd.Caller, cmd.RequestID
			})
			if !bytes.Equal(wire, old) {
				t.Fatalf("schema %d form:\n got %s\nwant %s", cmd.Schema, wire, old)
			}
			back, err := DecodeCommand(wire)
			if err != nil {
				t.Fatalf("decode %s: %v", wire, err)
			}
			if back.Schema != cmd.Schema {
				t.Fatalf("decoded schema %d, want %d", back.Schema, cmd.Schema)
			}
			again, err := back.Encode()
			if err != nil || !bytes.Equal(again, wire) {
				t.Fatalf("re-encoded: %s (%v)\nwant %s", again, err, wire)
			}
			cmd.Schema, back.Schema = SchemaBinary, SchemaBinary
			want, err := cmd.Encode()
			if err != nil {
				t.Fatal(err)
			}
			got, err := back.Encode()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("decoded command differs from the original: binary %x (%v), want %x", got, err, want)
			}
		})
	}
}

// TestJSONFormKeepsAbsentFields: a JSON entry decoded without a payload
// field (as schema 1 builds could write it) encodes to the JSON form
// without it again, not to an explicit null.
func TestJSONFormKeepsAbsentFields(t *testing.T) {
	for _, wire := range []string{
		`{"type":"put","schema":2,"payload":{"kind":"Node","name":"b"}}`,
		`{"type":"append-audit","schema":2,"payload":{}}`,
		`{"type":"batch","schema":2,"payload":{"ops":[{"put":{"kind":"Node","name":"b"}}],"audit":{}}}`,
	} {
		c, err := DecodeCommand([]byte(wire))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Encode()
		if err != nil || string(got) != wire {
			t.Errorf("re-encoded %s as %s (%v)", wire, got, err)
		}
	}
}
