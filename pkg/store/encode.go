package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// wireBinary is the first byte of a command in the binary wire form that
// Encode writes for schema 3 on (SchemaBinary). Commands of older schemas
// are JSON objects and start with '{'; DecodeCommand reads both.
//
// The binary form is: wireBinary; the schema (uvarint); a flags byte
// (flagIgnorable, flagTyped); the type, time, id, caller and request id
// (each a string: uvarint length, bytes); then the payload. A typed
// payload (flagTyped) is the type's fields in order (see appendPut and
// the others); otherwise it is the payload's JSON as optional bytes
// (uvarint length + 1, bytes; 0 for none), decoded by Apply.
const wireBinary byte = 0x01

// Flags of the binary wire form.
const (
	flagIgnorable byte = 1 << 0
	flagTyped     byte = 1 << 1
)

// Operation kinds of a Batch op in the binary wire form, or'ed.
const (
	opHasPut    byte = 1 << 0
	opHasDelete byte = 1 << 1
)

// Encode returns the command's wire form, as stored in the raft log, in
// the form of its Schema: from SchemaBinary on the binary form, with the
// payload in its type's binary layout when the command holds it typed
// (NewCommand, DecodeCommand) and as JSON otherwise; for an older schema
// the JSON form its builds wrote (see encodeJSON), so a cluster that still
// has members of that schema can follow.
func (c Command) Encode() ([]byte, error) {
	if c.Schema < 0 {
		return nil, fmt.Errorf("encode command %s: negative schema %d: %w", c.Type, c.Schema, ErrInvalid)
	}
	if c.Schema < SchemaBinary {
		return c.encodeJSON()
	}
	typed := c.Payload == nil && c.typed != nil
	b := make([]byte, 0, 64+len(c.Type)+len(c.Time)+len(c.ID)+len(c.Caller)+len(c.RequestID)+len(c.Payload)+c.typedSize())
	b = append(b, wireBinary)
	b = binary.AppendUvarint(b, uint64(c.Schema))
	var flags byte
	if c.Ignorable {
		flags |= flagIgnorable
	}
	if typed {
		flags |= flagTyped
	}
	b = append(b, flags)
	for _, s := range []string{c.Type, c.Time, c.ID, c.Caller, c.RequestID} {
		b = appendStr(b, s)
	}
	if !typed {
		return appendOpt(b, c.Payload), nil
	}
	switch p := c.typed.(type) {
	case *Put:
		return appendPut(b, p), nil
	case *Delete:
		return appendDelete(b, p), nil
	case *Batch:
		return appendBatch(b, p), nil
	case *AppendAudit:
		return appendOpt(b, p.Entry), nil
	default:
		return nil, fmt.Errorf("encode command %s: payload %T: %w", c.Type, c.typed, ErrInvalid)
	}
}

// typedSize is about how many bytes the typed payload's raw JSON takes.
func (c Command) typedSize() int {
	switch p := c.typed.(type) {
	case *Put:
		return len(p.Data)
	case *AppendAudit:
		return len(p.Entry)
	case *Batch:
		n := 0
		for _, op := range p.Ops {
			if op.Put != nil {
				n += len(op.Put.Data)
			}
		}
		if p.Audit != nil {
			n += len(p.Audit.Entry)
		}
		return n + 16*len(p.Ops)
	}
	return 0
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendOpt appends optional bytes: 0 for nil, else length + 1 and them.
func appendOpt(b, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

// appendIndex appends an optional index: 0 for nil, else 1 and the value.
func appendIndex(b []byte, v *uint64) []byte {
	if v == nil {
		return append(b, 0)
	}
	return binary.AppendUvarint(append(b, 1), *v)
}

func appendPut(b []byte, p *Put) []byte {
	b = appendStr(b, p.Kind)
	b = appendStr(b, p.Name)
	b = appendOpt(b, p.Data)
	return appendIndex(b, p.ExpectModifyIndex)
}

func appendDelete(b []byte, d *Delete) []byte {
	b = appendStr(b, d.Kind)
	b = appendStr(b, d.Name)
	return appendIndex(b, d.ExpectModifyIndex)
}

func appendBatch(b []byte, p *Batch) []byte {
	b = binary.AppendUvarint(b, uint64(len(p.Ops)))
	for _, op := range p.Ops {
		var has byte
		if op.Put != nil {
			has |= opHasPut
		}
		if op.Delete != nil {
			has |= opHasDelete
		}
		b = append(b, has)
		if op.Put != nil {
			b = appendPut(b, op.Put)
		}
		if op.Delete != nil {
			b = appendDelete(b, op.Delete)
		}
	}
	if p.Audit == nil {
		return append(b, 0)
	}
	return appendOpt(append(b, 1), p.Audit.Entry)
}

// normalRaw is raw JSON as json.Marshal embeds it in an enclosing value
// (compacted, HTML-escaped, "null" for none), so a typed payload stores
// the bytes the JSON wire form of earlier schemas stored. It fails on
// invalid JSON, as marshaling the payload did.
//
// Raw JSON that is valid, compact and holds nothing json.Marshal escapes
// (<, >, & and the line separators U+2028 and U+2029) is already in that
// form, and is returned as it is: the server hands over every PUT body
// compacted, so this is the common case, and it spares the leader a copy.
func normalRaw(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) > 0 && !needsEscape(raw) && isCompact(raw) && json.Valid(raw) {
		return raw, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// needsEscape reports whether b holds a byte json.Marshal's HTML escaping
// would change: <, > or &, or the first byte of U+2028 or U+2029.
func needsEscape(b []byte) bool {
	for i, c := range b {
		switch {
		case c == '<' || c == '>' || c == '&':
			return true
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9):
			return true
		}
	}
	return false
}

func (p Put) normalized() (*Put, error) {
	data, err := normalRaw(p.Data)
	if err != nil {
		return nil, fmt.Errorf("put %s/%s data: %w", p.Kind, p.Name, err)
	}
	p.Data = data
	p.ExpectModifyIndex = copyIndex(p.ExpectModifyIndex)
	return &p, nil
}

func (d Delete) normalized() *Delete {
	d.ExpectModifyIndex = copyIndex(d.ExpectModifyIndex)
	return &d
}

func (a AppendAudit) normalized() (*AppendAudit, error) {
	entry, err := normalRaw(a.Entry)
	if err != nil {
		return nil, fmt.Errorf("audit entry: %w", err)
	}
	return &AppendAudit{Entry: entry}, nil
}

func (b Batch) normalized() (*Batch, error) {
	out := &Batch{Ops: make([]Op, len(b.Ops))}
	if b.Ops == nil {
		out.Ops = nil
	}
	for i, op := range b.Ops {
		if op.Put != nil {
			p, err := op.Put.normalized()
			if err != nil {
				return nil, err
			}
			out.Ops[i].Put = p
		}
		if op.Delete != nil {
			out.Ops[i].Delete = op.Delete.normalized()
		}
	}
	if b.Audit != nil {
		a, err := b.Audit.normalized()
		if err != nil {
			return nil, err
		}
		out.Audit = a
	}
	return out, nil
}

func copyIndex(v *uint64) *uint64 {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}
