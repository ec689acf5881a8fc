package store

import "encoding/json"

// Kinds the store itself writes or treats specially. Any other kind string is
// stored as is.
const (
	// KindAudit holds audit entries appended with AppendAudit; their names
	// are AuditName(index), so they list in commit order.
	KindAudit = "Audit"
	// KindSecret holds sealed private material. Its Data must be a Sealed
	// envelope; Apply refuses anything else with ErrNotSealed.
	KindSecret = "Secret"
)

// Object is one stored object. Data is the object's JSON, compacted; for
// KindSecret it is a Sealed envelope.
type Object struct {
	// Kind is the object's kind, e.g. KubernetesCluster.
	Kind string `json:"kind"`
	// Name identifies the object within its kind.
	Name string `json:"name"`
	// CreateIndex is the raft index of the command that created the object.
	CreateIndex uint64 `json:"createIndex"`
	// ModifyIndex is the raft index of the command that last changed it.
	ModifyIndex uint64 `json:"modifyIndex"`
	// CreateTime is the leader's time stamp (RFC 3339) of the creating command.
	CreateTime string `json:"createTime,omitempty"`
	// ModifyTime is the leader's time stamp (RFC 3339) of the last change.
	ModifyTime string `json:"modifyTime,omitempty"`
	// Data is the object's JSON body.
	Data json.RawMessage `json:"data"`
}

// key is the radix key of (kind, name): the kind, a NUL, the name. NUL cannot
// appear in a kind, so one kind's keys form a contiguous, name-sorted range.
func key(kind, name string) []byte {
	b := make([]byte, 0, len(kind)+1+len(name))
	b = append(b, kind...)
	b = append(b, 0)
	return append(b, name...)
}
