package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	iradix "github.com/hashicorp/go-immutable-radix"
)

// txn is the pending change of one ApplyBatch: a radix transaction plus
// the kinds (with the index that last changed each), counts and watch keys
// its commands touched. index and time are the command being applied. It
// takes effect only on commit.
type txn struct {
	txn       *iradix.Txn
	index     uint64
	time      string
	kindDelta map[string]int
	kinds     map[string]uint64
	keys      map[string]struct{}
	counts    func(kind string) int
	// dedup, dedupOrder and dedupLen are the request table (see State).
	dedup      *iradix.Txn
	dedupOrder *iradix.Txn
	dedupLen   int
	// auditBytes is the audit entries' data size before the transaction,
	// auditDelta its change so far.
	auditBytes func() int64
	auditDelta int64
	// retention decodes the audit policy (the State's, kept across
	// transactions).
	retention *retentionMemo
}

func (s *State) begin() *txn {
	s.mu.RLock()
	tree, dedup, dedupOrder, dedupLen := s.tree, s.dedup, s.dedupOrder, s.dedupLen
	s.mu.RUnlock()
	return &txn{
		txn:        tree.Txn(),
		dedup:      dedup.Txn(),
		dedupOrder: dedupOrder.Txn(),
		dedupLen:   dedupLen,
		kindDelta:  map[string]int{},
		kinds:      map[string]uint64{},
		keys:       map[string]struct{}{},
		counts:     s.Count,
		auditBytes: s.AuditBytes,
		retention:  &s.retention,
	}
}

// commit swaps in the transaction's tree, records last as the last index
// processed (whether or not it changed anything) and wakes the watchers of
// every key and kind the transaction touched.
func (s *State) commit(t *txn, last uint64) {
	s.mu.Lock()
	s.tree = t.txn.Commit()
	s.dedup, s.dedupOrder, s.dedupLen = t.dedup.Commit(), t.dedupOrder.Commit(), t.dedupLen
	if last > s.lastIndex {
		s.lastIndex = last
	}
	for kind, index := range t.kinds {
		s.kindIndex[kind] = index
	}
	for kind, d := range t.kindDelta {
		s.kindCount[kind] += d
		if s.kindCount[kind] == 0 {
			delete(s.kindCount, kind)
		}
	}
	s.auditBytes += t.auditDelta
	s.mu.Unlock()
	s.notify(t.keys, t.kinds)
}

func validKey(kind, name string) error {
	if kind == "" || name == "" {
		return fmt.Errorf("kind and name are required: %w", ErrInvalid)
	}
	if strings.ContainsRune(kind, 0) {
		return fmt.Errorf("kind %q contains NUL: %w", kind, ErrInvalid)
	}
	return nil
}

func checkExpect(kind, name string, cur *Object, expect *uint64) error {
	if expect == nil {
		return nil
	}
	switch {
	case *expect == 0 && cur != nil:
		return fmt.Errorf("%s/%s exists at index %d, expected absent: %w", kind, name, cur.ModifyIndex, ErrConflict)
	case *expect != 0 && cur == nil:
		return fmt.Errorf("%s/%s does not exist, expected index %d: %w", kind, name, *expect, ErrConflict)
	case cur != nil && *expect != cur.ModifyIndex:
		return fmt.Errorf("%s/%s is at index %d, expected %d: %w", kind, name, cur.ModifyIndex, *expect, ErrConflict)
	}
	return nil
}

func (t *txn) get(kind, name string) *Object {
	v, ok := t.txn.Get(key(kind, name))
	if !ok {
		return nil
	}
	return v.(*Object)
}

// change is one checked mutation: obj stored as (kind, name), or the
// object deleted when obj is nil. created says a put makes a new object;
// prevSize is the data size of the object it replaces or deletes.
type change struct {
	kind, name string
	obj        *Object
	created    bool
	prevSize   int64
}

// apply makes a checked change; it cannot fail.
func (t *txn) apply(c change) {
	k := key(c.kind, c.name)
	switch {
	case c.obj == nil:
		t.txn.Delete(k)
		t.kindDelta[c.kind]--
	case c.created:
		t.txn.Insert(k, c.obj)
		t.kindDelta[c.kind]++
	default:
		t.txn.Insert(k, c.obj)
	}
	if c.kind == KindAudit {
		t.auditDelta -= c.prevSize
		if c.obj != nil {
			t.auditDelta += int64(len(c.obj.Data))
		}
	}
	t.kinds[c.kind] = t.index
	t.keys[string(k)] = struct{}{}
}

// checkPut checks a put against the transaction's state without changing
// anything and returns the change that makes it.
func (t *txn) checkPut(p Put) (change, error) {
	if err := validKey(p.Kind, p.Name); err != nil {
		return change{}, fmt.Errorf("put: %w", err)
	}
	data, err := compactData(p.Data)
	if err != nil {
		return change{}, fmt.Errorf("put %s/%s: data: %w: %w", p.Kind, p.Name, ErrInvalid, err)
	}
	if p.Kind == KindSecret && !checkSealed(data) {
		return change{}, fmt.Errorf("put %s/%s: %w", p.Kind, p.Name, ErrNotSealed)
	}
	cur := t.get(p.Kind, p.Name)
	if err := checkExpect(p.Kind, p.Name, cur, p.ExpectModifyIndex); err != nil {
		return change{}, fmt.Errorf("put: %w", err)
	}
	obj := &Object{
		Kind: p.Kind, Name: p.Name,
		CreateIndex: t.index, ModifyIndex: t.index,
		CreateTime: t.time, ModifyTime: t.time,
		Data: data,
	}
	c := change{kind: p.Kind, name: p.Name, obj: obj, created: cur == nil}
	if cur != nil {
		obj.CreateIndex, obj.CreateTime = cur.CreateIndex, cur.CreateTime
		c.prevSize = int64(len(cur.Data))
	}
	return c, nil
}

// checkDelete checks a delete like checkPut.
func (t *txn) checkDelete(d Delete) (change, error) {
	if err := validKey(d.Kind, d.Name); err != nil {
		return change{}, fmt.Errorf("delete: %w", err)
	}
	cur := t.get(d.Kind, d.Name)
	if cur == nil {
		return change{}, fmt.Errorf("delete %s/%s: %w", d.Kind, d.Name, ErrNotFound)
	}
	if err := checkExpect(d.Kind, d.Name, cur, d.ExpectModifyIndex); err != nil {
		return change{}, fmt.Errorf("delete: %w", err)
	}
	return change{kind: d.Kind, name: d.Name, prevSize: int64(len(cur.Data))}, nil
}

// checkOp checks one batch operation like checkPut.
func (t *txn) checkOp(op Op) (change, error) {
	switch {
	case op.Put != nil && op.Delete == nil:
		return t.checkPut(*op.Put)
	case op.Delete != nil && op.Put == nil:
		return t.checkDelete(*op.Delete)
	}
	return change{}, fmt.Errorf("set exactly one of put and delete: %w", ErrInvalid)
}

// checkAudit checks appending an audit entry at the current index.
func (t *txn) checkAudit(a AppendAudit) (change, error) {
	c, err := t.checkPut(Put{Kind: KindAudit, Name: AuditName(t.index), Data: a.Entry})
	if err != nil {
		return change{}, fmt.Errorf("append audit: %w", err)
	}
	return c, nil
}

func (t *txn) put(p Put) error {
	c, err := t.checkPut(p)
	if err != nil {
		return err
	}
	t.apply(c)
	return nil
}

func (t *txn) delete(d Delete) error {
	c, err := t.checkDelete(d)
	if err != nil {
		return err
	}
	t.apply(c)
	return nil
}

func (t *txn) appendAudit(a AppendAudit) error {
	c, err := t.checkAudit(a)
	if err != nil {
		return err
	}
	t.apply(c)
	t.trimAudit()
	return nil
}

// batch applies a batch all or nothing. When no key is changed twice
// (the usual case: a write and its audit entry), every operation is
// checked first and then applied, so a failure leaves nothing to undo.
func (t *txn) batch(b Batch) error {
	if !t.distinctKeys(b) {
		return t.batchInOrder(b)
	}
	changes := make([]change, 0, len(b.Ops)+1)
	for i, op := range b.Ops {
		c, err := t.checkOp(op)
		if err != nil {
			return fmt.Errorf("batch op %d: %w", i, err)
		}
		changes = append(changes, c)
	}
	if b.Audit != nil {
		c, err := t.checkAudit(*b.Audit)
		if err != nil {
			return err
		}
		changes = append(changes, c)
	}
	for _, c := range changes {
		t.apply(c)
	}
	if b.Audit != nil {
		t.trimAudit()
	}
	return nil
}

// batchInOrder applies a batch that changes a key more than once: op by
// op, each seeing the ones before it; on a failure the transaction goes
// back to a copy taken before the first op.
func (t *txn) batchInOrder(b Batch) error {
	saved := *t
	saved.txn = t.txn.Clone()
	saved.kindDelta, saved.kinds, saved.keys = maps.Clone(t.kindDelta), maps.Clone(t.kinds), maps.Clone(t.keys)
	fail := func(err error) error {
		*t = saved
		return err
	}
	for i, op := range b.Ops {
		c, err := t.checkOp(op)
		if err != nil {
			return fail(fmt.Errorf("batch op %d: %w", i, err))
		}
		t.apply(c)
	}
	if b.Audit != nil {
		if err := t.appendAudit(*b.Audit); err != nil {
			return fail(err)
		}
	}
	return nil
}

// distinctKeys reports whether no two of the batch's operations (and its
// audit entry) name the same object.
func (t *txn) distinctKeys(b Batch) bool {
	keys := make([]string, 0, len(b.Ops)+1)
	for _, op := range b.Ops {
		switch {
		case op.Put != nil:
			keys = append(keys, string(key(op.Put.Kind, op.Put.Name)))
		case op.Delete != nil:
			keys = append(keys, string(key(op.Delete.Kind, op.Delete.Name)))
		}
	}
	if b.Audit != nil {
		keys = append(keys, string(key(KindAudit, AuditName(t.index))))
	}
	seen := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if _, ok := seen[k]; ok {
			return false
		}
		seen[k] = struct{}{}
	}
	return true
}

// compactData returns data compacted. Data decoded from a payload is one
// valid JSON value, and without whitespace outside its strings (what every
// writer's json.Marshal produces) it is compact already: it is kept as it
// is, which is what json.Compact would return, without running JSON's
// scanner over it again.
func compactData(data json.RawMessage) (json.RawMessage, error) {
	if len(data) > 0 && isCompact(data) {
		return data, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// isCompact reports whether valid JSON has no whitespace outside strings.
func isCompact(data []byte) bool {
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}
