package chaos

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"
)

// CheckTimeout bounds porcupine's search of one history; a search that
// runs out is a failure too (MaxOps keeps histories well within it).
const CheckTimeout = 2 * time.Minute

// OutEnv names the directory failing checks write into; unset, each
// failure gets a new kept temporary directory.
const OutEnv = "CHAOS_OUT"

// Sentinel errors of Check, matched with errors.Is.
var (
	// ErrNotLinearizable: porcupine found no linearization.
	ErrNotLinearizable = errors.New("history is not linearizable")
	// ErrInconclusive: porcupine ran out of CheckTimeout.
	ErrInconclusive = errors.New("linearizability check timed out")
	// ErrIndexMismatch: one ModifyIndex named two values, or one value two
	// indexes.
	ErrIndexMismatch = errors.New("indexes and values disagree")
	// ErrPhantomRead: a stale read returned a value no write wrote.
	ErrPhantomRead = errors.New("stale read returned a value never written")
)

// Check checks a history: the leader-confirmed operations must be
// linearizable as a per-key register with CAS, every index must name one
// value, and stale reads may return only values some write wrote. On
// failure it writes history.json and visualization.html into a directory
// whose path the error gives; label names the run (e.g. its seed).
func Check(label string, ops []Op) error {
	err := check(ops)
	if err == nil {
		return nil
	}
	dir, derr := dump(label, ops)
	if derr != nil {
		return fmt.Errorf("check %s: %w (and %v)", label, err, derr)
	}
	return fmt.Errorf("check %s: %w; history and visualization in %s", label, err, dir)
}

func check(ops []Op) error {
	byIndex, err := indexValues(ops)
	if err != nil {
		return err
	}
	if err := checkStale(ops); err != nil {
		return err
	}
	res, _ := porcupine.CheckOperationsVerbose(kvModel(), porcupineOps(ops, byIndex), CheckTimeout)
	switch res {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return ErrInconclusive
	default:
		return ErrNotLinearizable
	}
}

// indexValues maps every index an operation observed (a write's applied
// index, a read object's ModifyIndex) to the value it names.
func indexValues(ops []Op) (map[uint64]string, error) {
	byIndex := map[uint64]string{}
	byValue := map[string]uint64{}
	note := func(idx uint64, v string) error {
		if old, ok := byIndex[idx]; ok && old != v {
			return fmt.Errorf("index %d is both %q and %q: %w", idx, old, v, ErrIndexMismatch)
		}
		if old, ok := byValue[v]; ok && old != idx {
			return fmt.Errorf("value %q is at both index %d and %d: %w", v, old, idx, ErrIndexMismatch)
		}
		byIndex[idx], byValue[v] = v, idx
		return nil
	}
	for _, op := range ops {
		if op.Outcome != OK {
			continue
		}
		var err error
		switch {
		case op.Kind == KindPut || op.Kind == KindCAS:
			err = note(op.Index, op.Value)
		case (op.Kind == KindRead || op.Kind == KindStaleRead) && op.Found:
			err = note(op.Index, op.Got)
		}
		if err != nil {
			return nil, err
		}
	}
	return byIndex, nil
}

// checkStale holds stale reads to the weaker model: a found value was
// written (attempted) to that key by some put or CAS.
func checkStale(ops []Op) error {
	written := map[string]string{}
	for _, op := range ops {
		if op.Kind == KindPut || op.Kind == KindCAS {
			written[op.Value] = op.Key
		}
	}
	for _, op := range ops {
		if op.Kind != KindStaleRead || op.Outcome != OK || !op.Found {
			continue
		}
		if written[op.Got] != op.Key {
			return fmt.Errorf("stale read of %s from %s returned %q: %w", op.Key, op.Replica, op.Got, ErrPhantomRead)
		}
	}
	return nil
}

// porcupineOps turns the history into porcupine operations: stale reads
// and failed reads are left out, a CAS's expected index becomes the value
// it names, and unknown operations return after everything else.
func porcupineOps(ops []Op, byIndex map[uint64]string) []porcupine.Operation {
	var end int64
	for _, op := range ops {
		end = max(end, op.Return)
	}
	var out []porcupine.Operation
	for _, op := range ops {
		if op.Kind == KindStaleRead || (op.Kind == KindRead && op.Outcome != OK) {
			continue
		}
		in := input{kind: op.Kind, key: op.Key, value: op.Value}
		if op.Expect != nil {
			in.cas = true
			in.expect = expectedValue(*op.Expect, byIndex)
		}
		ret := op.Return
		if op.Outcome == Unknown {
			ret = end + 1
		}
		out = append(out, porcupine.Operation{
			ClientId: op.Client,
			Input:    in,
			Call:     op.Call,
			Output:   output{outcome: op.Outcome, conflict: op.Conflict, notFound: op.NotFound, found: op.Found, got: op.Got},
			Return:   ret,
		})
	}
	return out
}

func expectedValue(idx uint64, byIndex map[uint64]string) string {
	if idx == 0 {
		return absent
	}
	if v, ok := byIndex[idx]; ok {
		return v
	}
	return unresolved + strconv.FormatUint(idx, 10)
}

// dump writes the history and porcupine's visualization of it.
func dump(label string, ops []Op) (string, error) {
	base := os.Getenv(OutEnv)
	if base != "" {
		if err := os.MkdirAll(base, 0o755); err != nil {
			return "", fmt.Errorf("make chaos output dir: %w", err)
		}
	}
	dir, err := os.MkdirTemp(base, "kcore-chaos-"+sanitize(label)+"-")
	if err != nil {
		return "", fmt.Errorf("make chaos output dir: %w", err)
	}
	if err := writeHistory(filepath.Join(dir, "history.json"), ops); err != nil {
		return "", err
	}
	byIndex, _ := indexValues(ops)
	if byIndex == nil {
		byIndex = map[uint64]string{}
	}
	model := kvModel()
	_, info := porcupine.CheckOperationsVerbose(model, porcupineOps(ops, byIndex), CheckTimeout)
	if err := porcupine.VisualizePath(model, info, filepath.Join(dir, "visualization.html")); err != nil {
		return "", fmt.Errorf("write visualization: %w", err)
	}
	return dir, nil
}

// sanitize keeps letters, digits and dashes of a label for a file name.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	return string(b)
}
