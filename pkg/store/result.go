package store

import (
	"encoding/json"
	"errors"
)

// Errors a command can fail with. Results carry them wrapped; test with
// errors.Is.
var (
	// ErrConflict means a CAS condition (ExpectModifyIndex) did not hold.
	ErrConflict = errors.New("conflict")
	// ErrNotFound means the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnknownCommand means the command type is not known to this build
	// and the command is not ignorable.
	ErrUnknownCommand = errors.New("unknown command")
	// ErrSchemaTooNew means a command or snapshot was written by a newer
	// schema than this build reads.
	ErrSchemaTooNew = errors.New("schema too new")
	// ErrInvalid means a command or snapshot is malformed: bad JSON, an
	// empty kind or name, a batch op that is neither put nor delete.
	ErrInvalid = errors.New("invalid")
	// ErrNotSealed means a KindSecret object's data is not a Sealed envelope.
	ErrNotSealed = errors.New("secret not sealed")
)

// Stable codes for the errors above, used on the wire (Result JSON, API
// error bodies).
const (
	CodeConflict       = "conflict"
	CodeNotFound       = "not_found"
	CodeUnknownCommand = "unknown_command"
	CodeSchemaTooNew   = "schema_too_new"
	CodeInvalid        = "invalid"
	CodeNotSealed      = "not_sealed"
	CodeInternal       = "internal"
)

// codes pairs each sentinel with its code; a function so it stays immutable.
func codes() []struct {
	err  error
	code string
} {
	return []struct {
		err  error
		code string
	}{
		{ErrConflict, CodeConflict},
		{ErrNotFound, CodeNotFound},
		{ErrUnknownCommand, CodeUnknownCommand},
		{ErrSchemaTooNew, CodeSchemaTooNew},
		{ErrInvalid, CodeInvalid},
		{ErrNotSealed, CodeNotSealed},
	}
}

// ErrorCode returns the stable code of err's sentinel, "" for nil and
// CodeInternal for an error that wraps none of them.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range codes() {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return CodeInternal
}

// ErrorFromCode rebuilds an error from its code and message, wrapping the
// code's sentinel so errors.Is works across the wire.
func ErrorFromCode(code, message string) error {
	if code == "" {
		return nil
	}
	for _, c := range codes() {
		if c.code == code {
			return &codedError{message: message, sentinel: c.err}
		}
	}
	return errors.New(message)
}

// codedError is an error rebuilt from the wire: its text as sent, wrapping
// the sentinel its code names.
type codedError struct {
	message  string
	sentinel error
}

func (e *codedError) Error() string { return e.message }

func (e *codedError) Unwrap() error { return e.sentinel }

// Result is the outcome of applying one command.
type Result struct {
	// Index is the raft index the command was applied at. On success it is
	// the ModifyIndex of every object the command wrote.
	Index uint64
	// Err is nil on success, otherwise it wraps one of the sentinels above.
	Err error
	// Replayed is set when the command repeated a remembered request id:
	// nothing was applied, Index and Err are the first application's.
	Replayed bool
}

type resultJSON struct {
	Index    uint64 `json:"index"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"message,omitempty"`
	Replayed bool   `json:"replayed,omitempty"`
}

// MarshalJSON encodes the result as {index, code, message, replayed}.
func (r Result) MarshalJSON() ([]byte, error) {
	j := resultJSON{Index: r.Index, Code: ErrorCode(r.Err), Replayed: r.Replayed}
	if r.Err != nil {
		j.Message = r.Err.Error()
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes {index, code, message, replayed}, rebuilding Err.
func (r *Result) UnmarshalJSON(b []byte) error {
	var j resultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	r.Index, r.Replayed = j.Index, j.Replayed
	r.Err = ErrorFromCode(j.Code, j.Message)
	return nil
}
