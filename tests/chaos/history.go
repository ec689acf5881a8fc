package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Kind is what an operation does.
type Kind string

// The operations a client records.
const (
	// KindPut writes a value unconditionally.
	KindPut Kind = "put"
	// KindCAS writes a value if the key's ModifyIndex is Expect (0: absent).
	KindCAS Kind = "cas"
	// KindDelete removes the key, if its ModifyIndex is Expect when set.
	KindDelete Kind = "delete"
	// KindRead is a leader-confirmed (linearizable) read.
	KindRead Kind = "read"
	// KindStaleRead is a read any replica answers from its local state
	// (?stale=true); it is not held to linearizability.
	KindStaleRead Kind = "stale-read"
)

// Outcome is what a client learned of an operation.
type Outcome string

// The outcomes of an operation.
const (
	// OK: the operation took effect (a read returned).
	OK Outcome = "ok"
	// Fail: the controller definitely did not apply it (CAS conflict, a
	// delete of an absent key, a read that returned an error).
	Fail Outcome = "fail"
	// Unknown: no definite answer (timeout, connection lost, no leader);
	// a write may have been applied, at any time after its invocation.
	Unknown Outcome = "unknown"
)

// Op is one recorded operation.
type Op struct {
	// Client is the recording client's id, from 0.
	Client int    `json:"client"`
	Kind   Kind   `json:"kind"`
	Key    string `json:"key"`
	// Value is what a put or CAS writes; every write's value is unique.
	Value string `json:"value,omitempty"`
	// Expect is a CAS's (or a conditional delete's) expected ModifyIndex.
	Expect *uint64 `json:"expect,omitempty"`
	// Call and Return are nanoseconds since the recorder started.
	Call   int64 `json:"call"`
	Return int64 `json:"return"`
	// Outcome is ok, fail or unknown.
	Outcome Outcome `json:"outcome"`
	// Conflict and NotFound say why a write failed.
	Conflict bool `json:"conflict,omitempty"`
	NotFound bool `json:"notFound,omitempty"`
	// Found and Got are a read's answer: whether the key existed and its
	// value.
	Found bool   `json:"found,omitempty"`
	Got   string `json:"got,omitempty"`
	// Index is a write's applied index or a read object's ModifyIndex.
	Index uint64 `json:"index,omitempty"`
	// Replica is the replica a stale read asked.
	Replica string `json:"replica,omitempty"`
	// Err is the client error of a fail or unknown outcome.
	Err string `json:"err,omitempty"`
}

// Recorder collects the operations of concurrent clients against one
// monotonic clock.
type Recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []Op
	max   int
}

// NewRecorder returns a recorder that keeps at most maxOps operations;
// Full reports when clients should stop.
func NewRecorder(maxOps int) *Recorder {
	return &Recorder{start: time.Now(), max: maxOps}
}

// Now is the recorder's clock: nanoseconds since it started.
func (r *Recorder) Now() int64 { return int64(time.Since(r.start)) }

// Add records a finished operation.
func (r *Recorder) Add(op Op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
}

// Full reports whether the recorder holds its maximum of operations.
func (r *Recorder) Full() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops) >= r.max
}

// History returns a copy of the recorded operations.
func (r *Recorder) History() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op{}, r.ops...)
}

// writeHistory writes ops as indented JSON to path.
func writeHistory(path string, ops []Op) error {
	b, err := json.MarshalIndent(ops, "", "  ")
	if err != nil {
		return fmt.Errorf("encode history: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}
