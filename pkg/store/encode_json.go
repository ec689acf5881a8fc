package store

import (
	"encoding/json"
	"fmt"
)

// encodeJSON returns the command's JSON wire form, byte for byte what
// builds of schemas 1 and 2 wrote: the envelope marshaled with
// encoding/json, the payload (held typed or as JSON) marshaled into it.
// DecodeCommand reads it back to the same command.
func (c Command) encodeJSON() ([]byte, error) {
	if c.Payload == nil && c.typed != nil {
		p, err := json.Marshal(jsonPayload(c.typed))
		if err != nil {
			return nil, fmt.Errorf("encode command %s: payload: %w", c.Type, err)
		}
		c.Payload = p
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode command %s: %w", c.Type, err)
	}
	return b, nil
}

// jsonPut is a Put as the JSON form writes it. A raw field that is nil
// (decoded from JSON that lacked it) is left out, so it decodes to nil
// again; a payload built by NewCommand always holds JSON there ("null" at
// least), written as marshaling the Put writes it.
type jsonPut struct {
	Kind              string          `json:"kind"`
	Name              string          `json:"name"`
	Data              json.RawMessage `json:"data,omitempty"`
	ExpectModifyIndex *uint64         `json:"expectModifyIndex,omitempty"`
}

// jsonAppendAudit is an AppendAudit as the JSON form writes it (see
// jsonPut).
type jsonAppendAudit struct {
	Entry json.RawMessage `json:"entry,omitempty"`
}

// jsonOp is an Op as the JSON form writes it.
type jsonOp struct {
	Put    *jsonPut `json:"put,omitempty"`
	Delete *Delete  `json:"delete,omitempty"`
}

// jsonBatch is a Batch as the JSON form writes it.
type jsonBatch struct {
	Ops   []jsonOp         `json:"ops"`
	Audit *jsonAppendAudit `json:"audit,omitempty"`
}

// jsonPayload returns the typed payload p in its JSON form's shape.
func jsonPayload(p any) any {
	switch p := p.(type) {
	case *Put:
		return jsonPutOf(p)
	case *AppendAudit:
		return &jsonAppendAudit{Entry: p.Entry}
	case *Batch:
		b := &jsonBatch{}
		if p.Ops != nil {
			b.Ops = make([]jsonOp, len(p.Ops))
		}
		for i, op := range p.Ops {
			if op.Put != nil {
				b.Ops[i].Put = jsonPutOf(op.Put)
			}
			b.Ops[i].Delete = op.Delete
		}
		if p.Audit != nil {
			b.Audit = &jsonAppendAudit{Entry: p.Audit.Entry}
		}
		return b
	}
	return p
}

func jsonPutOf(p *Put) *jsonPut {
	return &jsonPut{Kind: p.Kind, Name: p.Name, Data: p.Data, ExpectModifyIndex: p.ExpectModifyIndex}
}
