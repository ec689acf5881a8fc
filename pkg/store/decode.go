package store

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// typedCommand is a Command's wire form with its payload decoded into P in
// the same pass as the envelope.
type typedCommand[P any] struct {
	Type      string `json:"type"`
	Schema    int    `json:"schema"`
	Ignorable bool   `json:"ignorable,omitempty"`
	Time      string `json:"time,omitempty"`
	ID        string `json:"id,omitempty"`
	Caller    string `json:"caller,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	Payload   *P     `json:"payload"`
}

// DecodeCommand parses a command's wire form: the binary form Encode
// writes (see wireBinary), or the JSON form of schemas 1 and 2, which log
// entries written before the upgrade hold.
//
// JSON commands as earlier builds wrote them start with their type, so a known type is
// decoded in one pass, payload included, and Apply does not decode the
// payload again: every replica does this for every log entry. Anything
// else (another field order, an unknown field, a missing payload, trailing
// data) takes the general path, which decodes the envelope and leaves the
// payload to Apply; both paths give the same command.
//
// A binary command's put data is a slice of b itself (see binReader.put):
// b must not change while the command, or a state it was applied to, holds
// it. A raft log entry's Data, the one thing decoded here, never changes.
func DecodeCommand(b []byte) (Command, error) {
	if len(b) > 0 && b[0] == wireBinary {
		return decodeBinary(b)
	}
	var (
		c  Command
		ok bool
	)
	switch {
	case hasTypePrefix(b, TypeBatch):
		c, ok = decodeTyped[Batch](b)
	case hasTypePrefix(b, TypePut):
		c, ok = decodeTyped[Put](b)
	case hasTypePrefix(b, TypeDelete):
		c, ok = decodeTyped[Delete](b)
	case hasTypePrefix(b, TypeAppendAudit):
		c, ok = decodeTyped[AppendAudit](b)
	}
	if ok {
		return c, nil
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return Command{}, fmt.Errorf("decode command: %w: %w", ErrInvalid, err)
	}
	return c, nil
}

// hasTypePrefix reports whether b starts the way Encode starts a command of
// type typ.
func hasTypePrefix(b []byte, typ string) bool {
	const open = `{"type":"`
	n := len(open) + len(typ) + 1
	return len(b) > n && string(b[:len(open)]) == open &&
		string(b[len(open):n-1]) == typ && b[n-1] == '"'
}

// decodeTyped decodes b with a payload of type P, strictly (as Apply
// decodes payloads). ok is false when b needs the general path.
func decodeTyped[P any](b []byte) (c Command, ok bool) {
	var w typedCommand[P]
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil || w.Payload == nil {
		return Command{}, false
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) != 0 {
		return Command{}, false
	}
	return Command{Type: w.Type, Schema: w.Schema, Ignorable: w.Ignorable, Time: w.Time, ID: w.ID, Caller: w.Caller, RequestID: w.RequestID, typed: w.Payload}, true
}

// payloadOf returns cmd's payload as a P: the one DecodeCommand decoded, or
// Payload decoded now, strictly.
func payloadOf[P any](cmd Command) (*P, error) {
	if p, ok := cmd.typed.(*P); ok {
		return p, nil
	}
	p := new(P)
	dec := json.NewDecoder(bytes.NewReader(cmd.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("decode %s payload: %w: %w", cmd.Type, ErrInvalid, err)
	}
	return p, nil
}
