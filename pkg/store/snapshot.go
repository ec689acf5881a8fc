package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"

	iradix "github.com/hashicorp/go-immutable-radix"

	"kcore.dev/kcore/pkg/version"
)

// SnapshotFormat names the snapshot encoding in its header.
const SnapshotFormat = "kcore-store-snapshot"

// SnapshotHeader is the first JSON value of a snapshot; the objects follow,
// one JSON value per line, sorted by kind then name, then (from schema 2)
// the remembered requests, one DedupRecord per line, by index.
type SnapshotHeader struct {
	// Format is SnapshotFormat.
	Format string `json:"format"`
	// Schema is the schema version of the snapshot: the schema the cluster
	// wrote when it was taken (State.WriteSchema), at most that of the
	// build that wrote it.
	Schema int `json:"schema"`
	// LastIndex is the state's LastIndex.
	LastIndex uint64 `json:"lastIndex"`
	// KindIndex is every kind's index (see State.KindIndex).
	KindIndex map[string]uint64 `json:"kindIndex"`
	// Objects is how many objects follow.
	Objects int `json:"objects"`
	// Requests is how many DedupRecords follow the objects; schema 1
	// snapshots have none.
	Requests int `json:"requests,omitempty"`
}

// schemaRequests is the first schema whose snapshots hold requests.
const schemaRequests = 2

// Snapshot is a point-in-time copy of the state, cheap to take (the object
// tree is immutable) and safe to write while Apply goes on.
type Snapshot struct {
	header   SnapshotHeader
	tree     *iradix.Tree
	requests *iradix.Tree
}

// Snapshot captures the current state. Writing the same state always gives
// the same bytes. The header's schema is the one the cluster writes
// (WriteSchema over every Member object), so each member can restore the
// snapshot: the snapshot format has not changed since schema 2 (schema 3
// changed only log entries), so a snapshot of this build is one of that
// schema.
func (s *State) Snapshot() *Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return &Snapshot{
		header: SnapshotHeader{
			Format:    SnapshotFormat,
			Schema:    s.writeSchemaLocked(nil),
			LastIndex: s.lastIndex,
			KindIndex: maps.Clone(s.kindIndex),
			Objects:   s.tree.Len(),
			Requests:  s.dedupLen,
		},
		tree:     s.tree,
		requests: s.dedupOrder,
	}
}

// Header returns the snapshot's header.
func (sn *Snapshot) Header() SnapshotHeader { return sn.header }

// WriteTo writes the snapshot to w.
func (sn *Snapshot) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: bufio.NewWriter(w)}
	enc := json.NewEncoder(cw)
	if err := enc.Encode(sn.header); err != nil {
		return cw.n, fmt.Errorf("write snapshot header: %w", err)
	}
	var err error
	sn.tree.Root().Walk(func(_ []byte, v any) bool {
		err = enc.Encode(v.(*Object))
		return err != nil
	})
	if err != nil {
		return cw.n, fmt.Errorf("write snapshot object: %w", err)
	}
	sn.requests.Root().Walk(func(_ []byte, v any) bool {
		err = enc.Encode(v.(*DedupRecord))
		return err != nil
	})
	if err != nil {
		return cw.n, fmt.Errorf("write snapshot request: %w", err)
	}
	if err := cw.w.Flush(); err != nil {
		return cw.n, fmt.Errorf("write snapshot: %w", err)
	}
	return cw.n, nil
}

// Bytes returns the encoded snapshot.
func (sn *Snapshot) Bytes() []byte {
	var b bytes.Buffer
	// Writing to a bytes.Buffer cannot fail, and objects are valid JSON.
	_, _ = sn.WriteTo(&b)
	return b.Bytes()
}

type countWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadSnapshotHeader reads only the header of a snapshot, e.g. to check its
// schema before shipping it to a cluster.
func ReadSnapshotHeader(r io.Reader) (SnapshotHeader, error) {
	var h SnapshotHeader
	if err := json.NewDecoder(r).Decode(&h); err != nil {
		return h, fmt.Errorf("read snapshot header: %w: %w", ErrInvalid, err)
	}
	return h, checkHeader(h, version.Schema)
}

// checkHeader checks a snapshot's format and that its schema is at most
// reads.
func checkHeader(h SnapshotHeader, reads int) error {
	if h.Format != SnapshotFormat {
		return fmt.Errorf("read snapshot: format %q, want %q: %w", h.Format, SnapshotFormat, ErrInvalid)
	}
	if h.Schema > reads {
		return fmt.Errorf("read snapshot: schema %d, this build reads %d: %w", h.Schema, reads, ErrSchemaTooNew)
	}
	return nil
}

// Restore replaces the whole state with the snapshot read from r. It checks
// the whole snapshot before it changes anything: a snapshot with a newer
// schema is refused with ErrSchemaTooNew, a malformed or truncated one with
// ErrInvalid. Every waiter is woken.
func (s *State) Restore(r io.Reader) error {
	dec := json.NewDecoder(r)
	var h SnapshotHeader
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("restore: read header: %w: %w", ErrInvalid, err)
	}
	s.wmu.Lock()
	reads := s.readSchema()
	s.wmu.Unlock()
	if err := checkHeader(h, reads); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	txn := iradix.New().Txn()
	counts := map[string]int{}
	var auditBytes int64
	var prev []byte
	for i := range h.Objects {
		var o Object
		if err := dec.Decode(&o); err != nil {
			return fmt.Errorf("restore: read object %d of %d: %w: %w", i+1, h.Objects, ErrInvalid, err)
		}
		if err := validKey(o.Kind, o.Name); err != nil {
			return fmt.Errorf("restore: object %d: %w", i+1, err)
		}
		k := key(o.Kind, o.Name)
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("restore: object %d %s/%s out of order: %w", i+1, o.Kind, o.Name, ErrInvalid)
		}
		prev = k
		txn.Insert(k, &o)
		counts[o.Kind]++
		if o.Kind == KindAudit {
			auditBytes += int64(len(o.Data))
		}
	}
	dedup, order, err := readRequests(dec, h)
	if err != nil {
		return err
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("restore: data after %d objects and %d requests: %w", h.Objects, h.Requests, ErrInvalid)
	}
	kindIndex := h.KindIndex
	if kindIndex == nil {
		kindIndex = map[string]uint64{}
	}

	s.wmu.Lock()
	s.mu.Lock()
	s.tree = txn.Commit()
	s.lastIndex = h.LastIndex
	s.kindIndex = kindIndex
	s.kindCount = counts
	s.dedup, s.dedupOrder, s.dedupLen = dedup, order, h.Requests
	s.auditBytes = auditBytes
	s.mu.Unlock()
	s.wmu.Unlock()
	s.notifyAll()
	return nil
}

// readRequests reads the snapshot's remembered requests: none before
// schema 2, otherwise h.Requests records in ascending index order, each
// (caller, id) once.
func readRequests(dec *json.Decoder, h SnapshotHeader) (dedup, order *iradix.Tree, err error) {
	if h.Schema < schemaRequests && h.Requests != 0 {
		return nil, nil, fmt.Errorf("restore: schema %d snapshot lists %d requests: %w", h.Schema, h.Requests, ErrInvalid)
	}
	if h.Requests < 0 {
		return nil, nil, fmt.Errorf("restore: %d requests: %w", h.Requests, ErrInvalid)
	}
	byKey, byIndex := iradix.New().Txn(), iradix.New().Txn()
	var prev uint64
	for i := range h.Requests {
		var r DedupRecord
		if err := dec.Decode(&r); err != nil {
			return nil, nil, fmt.Errorf("restore: read request %d of %d: %w: %w", i+1, h.Requests, ErrInvalid, err)
		}
		if r.RequestID == "" || r.Index <= prev {
			return nil, nil, fmt.Errorf("restore: request %d: empty id or index %d out of order: %w", i+1, r.Index, ErrInvalid)
		}
		prev = r.Index
		if _, dup := byKey.Insert(dedupKey(r.Caller, r.RequestID), &r); dup {
			return nil, nil, fmt.Errorf("restore: request %d: id repeated: %w", i+1, ErrInvalid)
		}
		byIndex.Insert(orderKey(r.Index), &r)
	}
	return byKey.Commit(), byIndex.Commit(), nil
}
