package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// TestDecodeCommandPathsAgree applies wire forms decoded by DecodeCommand
// (which takes the one-pass path where it can) and by a plain envelope
// decode (payload decoded by Apply), and requires the same results and
// the same state, so replicas agree whichever path an entry takes.
func TestDecodeCommandPathsAgree(t *testing.T) {
	seed := `{"type":"put","schema":1,"time":"t0","id":"i0","payload":{"kind":"Node","name":"a","data":{"x":1}}}`
	tests := []struct {
		name    string
		wire    string
		oneStep bool // DecodeCommand decodes the payload with the envelope
	}{
		{"put", `{"type":"put","schema":1,"time":"t","id":"i","payload":{"kind":"Node","name":"b","data":{"y":[1,2]}}}`, true},
		{"put with spaces in data", `{"type":"put","schema":1,"payload":{"kind":"Node","name":"b","data":{ "y" : "a b" }}}`, true},
		{"put cas", `{"type":"put","schema":1,"payload":{"kind":"Node","name":"a","data":2,"expectModifyIndex":1}}`, true},
		{"put cas conflict", `{"type":"put","schema":1,"payload":{"kind":"Node","name":"a","data":2,"expectModifyIndex":7}}`, true},
		{"put without data", `{"type":"put","schema":1,"payload":{"kind":"Node","name":"b"}}`, true},
		{"put unknown payload field", `{"type":"put","schema":1,"payload":{"kind":"Node","name":"b","data":1,"extra":1}}`, false},
		{"put unknown envelope field", `{"type":"put","schema":1,"later":true,"payload":{"kind":"Node","name":"b","data":1}}`, false},
		{"put null payload", `{"type":"put","schema":1,"payload":null}`, false},
		{"put no payload", `{"type":"put","schema":1}`, false},
		{"put trailing data", `{"type":"put","schema":1,"payload":{"kind":"Node","name":"b","data":1}} {}`, false},
		{"put fields reordered", `{"schema":1,"type":"put","payload":{"kind":"Node","name":"b","data":1}}`, false},
		{"put newer schema", `{"type":"put","schema":999,"payload":{"kind":"Node","name":"b","data":1}}`, true},
		{"delete", `{"type":"delete","schema":1,"payload":{"kind":"Node","name":"a"}}`, true},
		{"delete missing", `{"type":"delete","schema":1,"payload":{"kind":"Node","name":"zz"}}`, true},
		{"batch with audit", `{"type":"batch","schema":1,"payload":{"ops":[{"put":{"kind":"Node","name":"c","data":"v"}},{"delete":{"kind":"Node","name":"a"}}],"audit":{"entry":{"result":200}}}}`, true},
		{"batch op with both", `{"type":"batch","schema":1,"payload":{"ops":[{"put":{"kind":"Node","name":"c","data":1},"delete":{"kind":"Node","name":"a"}}]}}`, true},
		{"append audit", `{"type":"append-audit","schema":1,"payload":{"entry":{"result":403}}}`, true},
		{"append audit without entry", `{"type":"append-audit","schema":1,"payload":{}}`, true},
		{"unknown type", `{"type":"putx","schema":1,"payload":{}}`, false},
		{"ignorable unknown type", `{"type":"later","schema":1,"ignorable":true,"payload":{}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fast, err := DecodeCommand([]byte(tt.wire))
			var general Command
			if gerr := json.Unmarshal([]byte(tt.wire), &general); (err == nil) != (gerr == nil) {
				t.Fatalf("DecodeCommand: %v, envelope decode: %v", err, gerr)
			}
			if err != nil {
				return
			}
			if got := fast.typed != nil; got != tt.oneStep {
				t.Fatalf("decoded in one step = %v, want %v", got, tt.oneStep)
			}
			var snaps [][]byte
			var codes []string
			for _, cmd := range []Command{fast, general} {
				s := New(nil)
				seedCmd, err := DecodeCommand([]byte(seed))
				if err != nil {
					t.Fatal(err)
				}
				if r := s.Apply(1, seedCmd); r.Err != nil {
					t.Fatal(r.Err)
				}
				codes = append(codes, ErrorCode(s.Apply(2, cmd).Err))
				snaps = append(snaps, s.Snapshot().Bytes())
			}
			if codes[0] != codes[1] {
				t.Fatalf("results differ: one-step %q, general %q", codes[0], codes[1])
			}
			if !bytes.Equal(snaps[0], snaps[1]) {
				t.Fatalf("states differ:\n%s\n---\n%s", snaps[0], snaps[1])
			}
			again, err := fast.Encode()
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			back, err := DecodeCommand(again)
			if err != nil {
				t.Fatal(err)
			}
			s := New(nil)
			s.Apply(2, back)
			t2 := New(nil)
			t2.Apply(2, fast)
			if !bytes.Equal(s.Snapshot().Bytes(), t2.Snapshot().Bytes()) {
				t.Fatal("re-encoding a decoded command changed it")
			}
		})
	}
}

// oldJSONWire is a command's wire form as schema 2 builds wrote it: the
// envelope and the payload marshaled to JSON.
func oldJSONWire(t *testing.T, typ string, payload any, edit func(c *Command)) []byte {
	t.Helper()
	p, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	c := Command{Type: typ, Schema: 2, Payload: p}
	edit(&c)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBinaryEncodingAgreesWithOldJSON applies each command twice: as this
// build encodes it (binary) and as schema 2 builds did (JSON, read by the
// old-format reader), and requires the same results and the same state,
// so a log that holds both applies as it did before the upgrade.
func TestBinaryEncodingAgreesWithOldJSON(t *testing.T) {
	put := Put{Kind: "Node", Name: "a<&>\"\\\u2028é", Data: json.RawMessage(`{ "x" : "<b>" }`)}
	seed := Put{Kind: "Node", Name: "s", Data: json.RawMessage(`1`)}
	tests := []struct {
		name    string
		typ     string
		payload any
		edit    func(c *Command)
	}{
		{"put", TypePut, put, func(*Command) {}},
		{"put stamped", TypePut, put, func(c *Command) { c.Time, c.ID = "2026-11-30T00:00:00.123456789Z", "0123abcd" }},
		{"put with request id", TypePut, put, func(c *Command) { c.Caller, c.RequestID = "cluster-admin:x", "r-1" }},
		{"put without data", TypePut, Put{Kind: "Node", Name: "b"}, func(*Command) {}},
		{"put cas create", TypePut, Put{Kind: "Node", Name: "b", Data: json.RawMessage(`2`), ExpectModifyIndex: Expect(0)}, func(*Command) {}},
		{"put cas conflict", TypePut, Put{Kind: "Node", Name: "s", Data: json.RawMessage(`2`), ExpectModifyIndex: Expect(7)}, func(*Command) {}},
		{"delete", TypeDelete, Delete{Kind: "Node", Name: "s", ExpectModifyIndex: Expect(1)}, func(*Command) {}},
		{"delete missing", TypeDelete, Delete{Kind: "Node", Name: "zz"}, func(*Command) {}},
		{"batch with audit", TypeBatch, Batch{Ops: []Op{{Put: &put}, {Delete: &Delete{Kind: "Node", Name: "s"}}}, Audit: &AppendAudit{Entry: json.RawMessage(`{"result": 200}`)}}, func(*Command) {}},
		{"batch op with both", TypeBatch, Batch{Ops: []Op{{Put: &put, Delete: &Delete{Kind: "Node", Name: "s"}}}}, func(*Command) {}},
		{"empty batch", TypeBatch, Batch{}, func(*Command) {}},
		{"append audit", TypeAppendAudit, AppendAudit{Entry: json.RawMessage(`{"result":403}`)}, func(*Command) {}},
		{"append audit without entry", TypeAppendAudit, AppendAudit{}, func(*Command) {}},
		{"ignorable unknown type", "later", map[string]int{"x": 1}, func(c *Command) { c.Ignorable = true }},
		{"unknown type", "later", map[string]int{"x": 1}, func(*Command) {}},
		{"newer schema", TypePut, put, func(c *Command) { c.Schema = 999 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := NewCommand(tt.typ, tt.payload)
			if err != nil {
				t.Fatal(err)
			}
			tt.edit(&cmd)
			bin, err := cmd.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if bin[0] != wireBinary {
				t.Fatalf("Encode wrote %q, want the binary form", bin)
			}
			old := oldJSONWire(t, tt.typ, tt.payload, func(c *Command) {
				c.Schema = cmd.Schema
				c.Ignorable, c.Time, c.ID, c.Caller, c.RequestID = cmd.Ignorable, cmd.Time, cmd.ID, cmd.Caller, cmd.RequestID
			})
			var snaps [][]byte
			var results []string
			for _, wire := range [][]byte{bin, old} {
				c, err := DecodeCommand(wire)
				if err != nil {
					t.Fatalf("decode %q: %v", wire, err)
				}
				s := New(nil)
				if r := s.Apply(1, mustCmd(t)(seed.Command())); r.Err != nil {
					t.Fatal(r.Err)
				}
				r := s.Apply(2, c)
				results = append(results, fmt.Sprintf("%d %s", r.Index, ErrorCode(r.Err)))
				snaps = append(snaps, s.Snapshot().Bytes())
			}
			if results[0] != results[1] {
				t.Fatalf("results differ: binary %q, old JSON %q", results[0], results[1])
			}
			if !bytes.Equal(snaps[0], snaps[1]) {
				t.Fatalf("states differ:\n%s\n---\n%s", snaps[0], snaps[1])
			}
		})
	}
}

// TestDecodeBinaryRefusesMalformed: every truncation of a binary command,
// and a command with trailing bytes, is refused as ErrInvalid (never a
// panic or a partly decoded command).
func TestDecodeBinaryRefusesMalformed(t *testing.T) {
	put := Put{Kind: "Node", Name: "a", Data: json.RawMessage(`{"x":1}`), ExpectModifyIndex: Expect(3)}
	cmd := mustCmd(t)(Batch{Ops: []Op{{Put: &put}, {Delete: &Delete{Kind: "Node", Name: "b"}}}, Audit: &AppendAudit{Entry: json.RawMessage(`1`)}}.Command())
	cmd.Time, cmd.ID, cmd.Caller, cmd.RequestID = "t", "i", "c", "r"
	wire, err := cmd.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeCommand(wire); err != nil {
		t.Fatalf("whole command: %v", err)
	}
	for n := 1; n < len(wire); n++ {
		if _, err := DecodeCommand(wire[:n]); !errors.Is(err, ErrInvalid) {
			t.Fatalf("truncated to %d of %d bytes: %v, want ErrInvalid", n, len(wire), err)
		}
	}
	bad := map[string][]byte{
		"trailing byte":      append(append([]byte{}, wire...), 0),
		"unknown flag":       {wireBinary, 3, 0x80, 3, 'p', 'u', 't', 0, 0, 0, 0, 0},
		"typed unknown type": {wireBinary, 3, flagTyped, 1, 'x', 0, 0, 0, 0, 0},
		"huge op count":      {wireBinary, 3, flagTyped, 5, 'b', 'a', 't', 'c', 'h', 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
	}
	for name, b := range bad {
		if _, err := DecodeCommand(b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// TestDecodedPutDataSharesOnlyItsOwnBytes: a binary put's data is a slice of
// the entry, so appending to it must not write over the rest of the entry;
// the audit entry is a copy, so the audit log never keeps a whole entry
// alive (changing the entry after decoding leaves it as it was).
func TestDecodedPutDataSharesOnlyItsOwnBytes(t *testing.T) {
	put := Put{Kind: "Node", Name: "a", Data: json.RawMessage(`{"x":1}`)}
	cmd := mustCmd(t)(Batch{Ops: []Op{{Put: &put}}, Audit: &AppendAudit{Entry: json.RawMessage(`{"result":200}`)}}.Command())
	wire, err := cmd.Encode()
	if err != nil {
		t.Fatal(err)
	}
	kept := bytes.Clone(wire)
	c, err := DecodeCommand(wire)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := c.typed.(*Batch)
	if !ok || len(b.Ops) != 1 || b.Audit == nil {
		t.Fatalf("decoded %#v", c.typed)
	}
	data := b.Ops[0].Put.Data
	_ = append(data, "garbage"...)
	if !bytes.Equal(wire, kept) {
		t.Fatalf("appending to the put's data changed the entry:\n%q\n%q", wire, kept)
	}
	at := bytes.Index(wire, []byte(`{"result":200}`))
	if at < 0 {
		t.Fatalf("no audit entry in %q", wire)
	}
	wire[at+2] = 'X'
	if string(b.Audit.Entry) != `{"result":200}` {
		t.Errorf("the audit entry shares the entry's memory: %q", b.Audit.Entry)
	}
	if string(data) != `{"x":1}` {
		t.Errorf("put data = %q", data)
	}
}

// FuzzNormalRaw: whichever path normalRaw takes, it returns what
// json.Marshal makes of the raw JSON (and fails where it fails).
func FuzzNormalRaw(f *testing.F) {
	for _, raw := range []string{
		`{"x":1}`, `{ "x" : 1 }`, `"<b>"`, `{"a":"&"}`, `"\u2028"`, "\"\u2028\"", "\"\u2029x\"", "\"\u2027\"",
		`[1,2,{"k":"v w"}]`, `"a\"b"`, `"é"`, `null`, `{"x":`, `{"x":1}}`, `nul`, ``, " 1", "\"\xe2\x80\"",
	} {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, wantErr := json.Marshal(json.RawMessage(raw))
		got, err := normalRaw(json.RawMessage(raw))
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Errorf("normalRaw(%q) = %q, %v; json.Marshal gives %q, %v", raw, got, err, want, wantErr)
		}
	})
}
