package store

import (
	"bytes"
	"encoding/json"
	"testing"
)

func mustCmd(t *testing.T) func(Command, error) Command {
	return func(c Command, err error) Command {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

func putCmd(t *testing.T, kind, name, data string, expect *uint64) Command {
	t.Helper()
	return mustCmd(t)(Put{Kind: kind, Name: name, Data: json.RawMessage(data), ExpectModifyIndex: expect}.Command())
}

func delCmd(t *testing.T, kind, name string, expect *uint64) Command {
	t.Helper()
	return mustCmd(t)(Delete{Kind: kind, Name: name, ExpectModifyIndex: expect}.Command())
}

func batchCmd(t *testing.T, ops ...Op) Command {
	t.Helper()
	return mustCmd(t)(Batch{Ops: ops}.Command())
}

func putOp(kind, name, data string, expect *uint64) Op {
	return Op{Put: &Put{Kind: kind, Name: name, Data: json.RawMessage(data), ExpectModifyIndex: expect}}
}

func delOp(kind, name string, expect *uint64) Op {
	return Op{Delete: &Delete{Kind: kind, Name: name, ExpectModifyIndex: expect}}
}

// names lists "kind/name@create:modify=data" for every object of kind.
func dump(s *State, kind string) []string {
	var out []string
	for _, o := range s.List(kind) {
		out = append(out, o.Kind+"/"+o.Name+"@"+itoa(o.CreateIndex)+":"+itoa(o.ModifyIndex)+"="+string(o.Data))
	}
	return out
}

func itoa(i uint64) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func mustRestore(t *testing.T, snap []byte) *State {
	t.Helper()
	s := New(nil)
	if err := s.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	return s
}

// objectsOf lists every object of s with its indexes, plus the kind indexes.
func objectsOf(t *testing.T, s *State) []string {
	t.Helper()
	var out []string
	s.root().Root().Walk(func(_ []byte, v any) bool {
		o := v.(*Object)
		out = append(out, o.Kind+"/"+o.Name+"@"+itoa(o.CreateIndex)+":"+itoa(o.ModifyIndex)+"="+string(o.Data))
		return false
	})
	h := s.Snapshot().Header()
	b, _ := json.Marshal(h.KindIndex)
	return append(out, string(b))
}

func bytesReaderOf(b []byte) *bytes.Reader { return bytes.NewReader(b) }
