package store

import (
	"bytes"
	"encoding/json"
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

// TestEncodeMatchesMarshal: the wire form Encode writes for a command from
// NewCommand is what json.Marshal writes for it.
func TestEncodeMatchesMarshal(t *testing.T) {
	put := mustCmd(t)(Put{Kind: "Node", Name: "a<&>\"\\\u2028é", Data: json.RawMessage(`{ "x" : "<b>" }`)}.Command())
	tests := []struct {
		name string
		edit func(c *Command)
	}{
		{"bare", func(*Command) {}},
		{"stamped", func(c *Command) { c.Time, c.ID = "2026-11-30T00:00:00.123456789Z", "0123abcd" }},
		{"ignorable", func(c *Command) { c.Ignorable = true }},
		{"escaped strings", func(c *Command) { c.Type, c.Time, c.ID = "a\"b\\c", "<t>&\n", "é\u2028\x7f" }},
		{"replaced payload", func(c *Command) { c.Payload = json.RawMessage(`{ "kind" : "Node" }`) }},
		{"no payload", func(c *Command) { c.Payload = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := put
			tt.edit(&c)
			got, err := c.Encode()
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Encode:\n%s\njson.Marshal:\n%s", got, want)
			}
		})
	}
}
