package store

import (
	"encoding/json"
	"fmt"

	"kcore.dev/kcore/pkg/version"
)

// Command types understood by this build.
const (
	// TypePut creates or replaces one object (payload Put).
	TypePut = "put"
	// TypeDelete removes one object (payload Delete).
	TypeDelete = "delete"
	// TypeBatch applies several puts and deletes atomically (payload Batch).
	TypeBatch = "batch"
	// TypeAppendAudit appends one audit entry (payload AppendAudit).
	TypeAppendAudit = "append-audit"
)

// Command is one replicated log entry: a typed, versioned envelope around a
// JSON payload. The leader stamps Time and ID before the command is
// replicated; Apply reads them and never the clock.
type Command struct {
	// Type selects the payload and its handler, e.g. TypePut.
	Type string `json:"type"`
	// Schema is the schema the command is written in: version.Schema from
	// NewCommand, lowered by the leader to the cluster's schema (see
	// ClusterSchema); Encode writes the form of that schema. A replica
	// refuses a command with a newer schema than it reads.
	Schema int `json:"schema"`
	// Ignorable lets a replica that does not know Type skip the command
	// instead of failing it.
	Ignorable bool `json:"ignorable,omitempty"`
	// Time is the leader's time stamp, RFC 3339 with nanoseconds.
	Time string `json:"time,omitempty"`
	// ID is a unique id stamped by the leader.
	ID string `json:"id,omitempty"`
	// Caller names who sent the request that carries RequestID (the API
	// caller's role and subject); with RequestID it keys the dedup table.
	Caller string `json:"caller,omitempty"`
	// RequestID is the client's id of the request, the same on every retry
	// of one logical call. When set, Apply applies the command at most once
	// per (Caller, RequestID) while the id is retained (see DedupRetain and
	// DedupMaxAge); a repeat gets the first application's Result.
	RequestID string `json:"requestId,omitempty"`
	// Payload is the type's JSON payload.
	Payload json.RawMessage `json:"payload,omitempty"`

	// typed is the payload held decoded (*Put, *Delete, *Batch or
	// *AppendAudit): by NewCommand, or by DecodeCommand in the same pass
	// as the envelope. Encode writes it in the binary layout and Apply
	// uses it without decoding JSON; Payload, when set, wins over it.
	typed any
}

// Put creates or replaces the object (Kind, Name) with Data.
type Put struct {
	// Kind of the object.
	Kind string `json:"kind"`
	// Name of the object.
	Name string `json:"name"`
	// Data is the object's JSON body.
	Data json.RawMessage `json:"data"`
	// ExpectModifyIndex makes the put conditional: nil writes
	// unconditionally, a pointer to 0 requires that the object does not
	// exist, any other value requires that it exists with that ModifyIndex.
	ExpectModifyIndex *uint64 `json:"expectModifyIndex,omitempty"`
}

// Delete removes the object (Kind, Name).
type Delete struct {
	// Kind of the object.
	Kind string `json:"kind"`
	// Name of the object.
	Name string `json:"name"`
	// ExpectModifyIndex, when set, requires that the object's ModifyIndex is
	// this value.
	ExpectModifyIndex *uint64 `json:"expectModifyIndex,omitempty"`
}

// Op is one operation of a Batch: exactly one of Put and Delete is set.
type Op struct {
	// Put, when set, is a put operation.
	Put *Put `json:"put,omitempty"`
	// Delete, when set, is a delete operation.
	Delete *Delete `json:"delete,omitempty"`
}

// Batch applies its operations in order, all or nothing: when one fails
// (including a CAS conflict) none takes effect. Later operations see the
// effect of earlier ones.
type Batch struct {
	// Ops are the operations, applied in order.
	Ops []Op `json:"ops"`
	// Audit, when set, is appended (as AppendAudit would) once every
	// operation succeeded, in the same log entry: a write and its audit
	// entry commit together or not at all.
	Audit *AppendAudit `json:"audit,omitempty"`
}

// AppendAudit appends one audit entry as the object (KindAudit,
// AuditName(index)). The store then drops the oldest entries the stored
// AuditRetention no longer keeps (the newest AuditRetain without one).
type AppendAudit struct {
	// Entry is the audit entry's JSON.
	Entry json.RawMessage `json:"entry"`
}

// AuditRetain is how many audit entries the store keeps when no
// AuditRetention is stored, or the stored one sets no MaxEntries; older
// ones are trimmed, oldest first, when a new entry is appended.
const AuditRetain = 100_000

// AuditName is the name of the audit entry appended at a raft index: the
// index in 20 zero-padded digits, so names sort in commit order.
func AuditName(index uint64) string {
	return fmt.Sprintf("%020d", index)
}

// Expect returns a pointer to index, for ExpectModifyIndex.
func Expect(index uint64) *uint64 {
	return &index
}

// NewCommand wraps a payload in a Command of the given type, stamped with
// this build's schema version. A Put, Delete, Batch or AppendAudit of its
// own type is held typed, its raw JSON fields validated and normalized as
// marshaling the payload would; any other payload is marshaled to JSON.
func NewCommand(typ string, payload any) (Command, error) {
	var (
		typed any
		err   error
	)
	switch p := payload.(type) {
	case Put:
		if typ == TypePut {
			typed, err = p.normalized()
		}
	case Delete:
		if typ == TypeDelete {
			typed = p.normalized()
		}
	case Batch:
		if typ == TypeBatch {
			typed, err = p.normalized()
		}
	case AppendAudit:
		if typ == TypeAppendAudit {
			typed, err = p.normalized()
		}
	}
	if err != nil {
		return Command{}, fmt.Errorf("encode %s payload: %w", typ, err)
	}
	if typed != nil {
		return Command{Type: typ, Schema: version.Schema, typed: typed}, nil
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return Command{}, fmt.Errorf("encode %s payload: %w", typ, err)
	}
	return Command{Type: typ, Schema: version.Schema, Payload: b}, nil
}

// Command wraps the put in a Command.
func (p Put) Command() (Command, error) { return NewCommand(TypePut, p) }

// Command wraps the delete in a Command.
func (d Delete) Command() (Command, error) { return NewCommand(TypeDelete, d) }

// Command wraps the batch in a Command.
func (b Batch) Command() (Command, error) { return NewCommand(TypeBatch, b) }

// Command wraps the audit entry in a Command.
func (a AppendAudit) Command() (Command, error) { return NewCommand(TypeAppendAudit, a) }
