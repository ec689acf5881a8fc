package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"kcore.dev/kcore/pkg/client"
)

// Bounds of one run's workload.
const (
	// Clients is how many concurrent clients a run has.
	Clients = 4
	// Keys is how many objects (registers) they share.
	Keys = 3
	// MaxOps caps the operations the clients of one run make (the probe
	// and final reads come on top), which keeps porcupine's search well
	// inside CheckTimeout.
	MaxOps = 2000
	// OpTimeout bounds one operation; past it the outcome is unknown.
	OpTimeout = 4 * time.Second
	// objectKind is the kind the registers are stored as.
	objectKind = "ChaosRegister"
)

// keyName is register i's object name.
func keyName(i int) string { return fmt.Sprintf("k%d", i) }

// register is a stored register's data.
type register struct {
	V string `json:"v"`
}

// worker is one client: it makes random operations and records them.
type worker struct {
	id  int
	cl  *client.Client
	rec *Recorder
	rng *rand.Rand
	// stale are clients of one replica each, for stale reads.
	stale   []*client.Client
	staleID []string
	// reader, when set, answers the worker's "linearizable" reads: the
	// deliberately broken client of TestBrokenClientFlagged.
	reader *client.Client
	// seen is the last ModifyIndex this worker saw per key, its CAS guess.
	seen map[string]uint64
	n    int
	// pace is the wait after each operation (run sets it with pace).
	pace time.Duration
}

// run makes operations, w.pace apart, until ctx ends or the recorder is
// full.
func (w *worker) run(ctx context.Context) {
	for ctx.Err() == nil && !w.rec.Full() {
		if w.n > 0 && w.pace > 0 {
			t := time.NewTimer(w.pace)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		key := keyName(w.rng.IntN(Keys))
		switch p := w.rng.IntN(100); {
		case p < 30:
			w.read(ctx, key)
		case p < 55:
			w.put(ctx, key, nil)
		case p < 80:
			idx := w.seen[key]
			w.put(ctx, key, &idx)
		case p < 90:
			var expect *uint64
			if w.rng.IntN(2) == 0 {
				idx := w.seen[key]
				expect = &idx
			}
			w.delete(ctx, key, expect)
		default:
			i := w.rng.IntN(len(w.stale))
			w.staleRead(ctx, key, w.stale[i], w.staleID[i])
		}
	}
}

// writeOutcome classifies a write's error.
func writeOutcome(op *Op, err error) {
	switch {
	case err == nil:
		op.Outcome = OK
		return
	case errors.Is(err, client.ErrConflict):
		op.Outcome, op.Conflict = Fail, true
	case errors.Is(err, client.ErrNotFound):
		op.Outcome, op.NotFound = Fail, true
	default:
		// No leader, a timeout, a lost connection: the write may still
		// be (or have been) applied.
		op.Outcome = Unknown
	}
	op.Err = err.Error()
}

func (w *worker) put(ctx context.Context, key string, expect *uint64) Op {
	w.n++
	op := Op{Client: w.id, Kind: KindPut, Key: key, Value: fmt.Sprintf("c%d-%d", w.id, w.n), Expect: expect}
	if expect != nil {
		op.Kind = KindCAS
	}
	octx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	op.Call = w.rec.Now()
	idx, err := w.cl.Put(octx, objectKind, key, register{V: op.Value}, expect)
	op.Return = w.rec.Now()
	writeOutcome(&op, err)
	if err == nil {
		op.Index = idx
		w.seen[key] = idx
	}
	w.rec.Add(op)
	return op
}

func (w *worker) delete(ctx context.Context, key string, expect *uint64) {
	op := Op{Client: w.id, Kind: KindDelete, Key: key, Expect: expect}
	octx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	op.Call = w.rec.Now()
	idx, err := w.cl.Delete(octx, objectKind, key, expect)
	op.Return = w.rec.Now()
	writeOutcome(&op, err)
	if err == nil {
		op.Index = idx
		w.seen[key] = 0
	}
	w.rec.Add(op)
}

// read is a leader-confirmed read (or, for the broken client, whatever
// its reader answers, recorded as if leader-confirmed).
func (w *worker) read(ctx context.Context, key string) Op {
	cl, opts := w.cl, client.ReadOptions{}
	if w.reader != nil {
		cl, opts = w.reader, client.ReadOptions{Stale: true}
	}
	op := w.get(ctx, KindRead, key, cl, opts, "")
	if op.Outcome == OK {
		w.seen[key] = op.Index
	}
	return op
}

func (w *worker) staleRead(ctx context.Context, key string, cl *client.Client, replica string) Op {
	return w.get(ctx, KindStaleRead, key, cl, client.ReadOptions{Stale: true}, replica)
}

func (w *worker) get(ctx context.Context, kind Kind, key string, cl *client.Client, opts client.ReadOptions, replica string) Op {
	op := Op{Client: w.id, Kind: kind, Key: key, Replica: replica}
	octx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	op.Call = w.rec.Now()
	o, _, err := cl.GetWith(octx, objectKind, key, opts)
	op.Return = w.rec.Now()
	switch {
	case errors.Is(err, client.ErrNotFound):
		op.Outcome = OK
	case err != nil:
		// A read changes nothing: one without an answer is left out.
		op.Outcome, op.Err = Fail, err.Error()
	default:
		var r register
		if jerr := json.Unmarshal(o.Data, &r); jerr != nil {
			op.Outcome, op.Err = Fail, fmt.Sprintf("decode %s: %v", key, jerr)
			break
		}
		op.Outcome, op.Found, op.Got, op.Index = OK, true, r.V, o.ModifyIndex
	}
	w.rec.Add(op)
	return op
}

// probe reads every key leader-confirmed from replica i alone, right after
// it was resumed: a replica that was paused as leader still believes it
// leads until raft tells it otherwise, and a read it answers from its own
// state in that window, without confirming with a quorum, is the stale
// read Jepsen found in lease-based reads. The answers are recorded and
// checked like any read.
func (w *worker) probe(ctx context.Context, i int) {
	for k := range Keys {
		w.get(ctx, KindRead, keyName(k), w.stale[i], client.ReadOptions{}, w.staleID[i])
	}
}
