package store

import (
	"encoding/json"
	"strconv"
)

// payloadMarshaled reports whether Payload is still the slice NewCommand
// marshaled, which is valid, compact JSON.
func (c Command) payloadMarshaled() bool {
	return len(c.Payload) > 0 && len(c.Payload) == len(c.marshaled) && &c.Payload[0] == &c.marshaled[0]
}

// appendWire appends the command's wire form to b: the bytes json.Marshal
// writes for it, with the payload copied instead of scanned and compacted
// again (it is most of an entry: a write's whole object).
func (c Command) appendWire(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, c.Type)
	b = append(b, `,"schema":`...)
	b = strconv.AppendInt(b, int64(c.Schema), 10)
	if c.Ignorable {
		b = append(b, `,"ignorable":true`...)
	}
	if c.Time != "" {
		b = append(b, `,"time":`...)
		b = appendString(b, c.Time)
	}
	if c.ID != "" {
		b = append(b, `,"id":`...)
		b = appendString(b, c.ID)
	}
	if c.Caller != "" {
		b = append(b, `,"caller":`...)
		b = appendString(b, c.Caller)
	}
	if c.RequestID != "" {
		b = append(b, `,"requestId":`...)
		b = appendString(b, c.RequestID)
	}
	b = append(b, `,"payload":`...)
	b = append(b, c.Payload...)
	return append(b, '}')
}

// appendString appends s as json.Marshal encodes a string. Printable ASCII
// without characters JSON or HTML escaping changes (types, RFC 3339 times,
// hex ids) is quoted directly.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
