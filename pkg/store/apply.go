package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	iradix "github.com/hashicorp/go-immutable-radix"

	"kcore.dev/kcore/pkg/version"
)

// Apply processes the command committed at index and returns its result. It
// is deterministic: the same commands at the same indexes give the same
// state on every replica. A failed command changes nothing. A command with a
// schema newer than version.Schema is refused with ErrSchemaTooNew, and an
// unknown non-ignorable type with ErrUnknownCommand; both are logged at
// error level with the index, because they mean this replica is too old for
// its log.
func (s *State) Apply(index uint64, cmd Command) Result {
	s.wmu.Lock()
	defer s.wmu.Unlock()

	if cmd.Schema > version.Schema {
		s.log.Error("refusing log entry written by a newer schema; upgrade this replica",
			"index", index, "type", cmd.Type, "schema", cmd.Schema, "reads", version.Schema)
		s.advance(index)
		return Result{Index: index, Err: fmt.Errorf("apply %s at %d: schema %d, this build reads %d: %w",
			cmd.Type, index, cmd.Schema, version.Schema, ErrSchemaTooNew)}
	}

	tx := s.begin(index, cmd.Time)
	var err error
	switch cmd.Type {
	case TypePut:
		var p *Put
		if p, err = payloadOf[Put](cmd); err == nil {
			err = tx.put(*p)
		}
	case TypeDelete:
		var d *Delete
		if d, err = payloadOf[Delete](cmd); err == nil {
			err = tx.delete(*d)
		}
	case TypeBatch:
		var b *Batch
		if b, err = payloadOf[Batch](cmd); err == nil {
			err = tx.batch(*b)
		}
	case TypeAppendAudit:
		var a *AppendAudit
		if a, err = payloadOf[AppendAudit](cmd); err == nil {
			err = tx.appendAudit(*a)
		}
	default:
		if cmd.Ignorable {
			s.log.Warn("skipping unknown ignorable log entry", "index", index, "type", cmd.Type, "schema", cmd.Schema)
			s.advance(index)
			return Result{Index: index}
		}
		s.log.Error("refusing unknown log entry; upgrade this replica", "index", index, "type", cmd.Type, "schema", cmd.Schema)
		err = fmt.Errorf("apply %q at %d: %w", cmd.Type, index, ErrUnknownCommand)
	}
	if err != nil {
		s.advance(index)
		return Result{Index: index, Err: err}
	}
	s.commit(tx)
	return Result{Index: index}
}

// txn is one command's pending change: a radix transaction plus the kind
// indexes, counts and watch keys it touched. It takes effect only on commit.
type txn struct {
	txn       *iradix.Txn
	index     uint64
	time      string
	kindDelta map[string]int
	kinds     map[string]struct{}
	keys      map[string]struct{}
	counts    func(kind string) int
}

func (s *State) begin(index uint64, time string) *txn {
	s.mu.RLock()
	tree := s.tree
	s.mu.RUnlock()
	return &txn{
		txn:       tree.Txn(),
		index:     index,
		time:      time,
		kindDelta: map[string]int{},
		kinds:     map[string]struct{}{},
		keys:      map[string]struct{}{},
		counts:    s.Count,
	}
}

// advance records that index was processed without changing any object.
func (s *State) advance(index uint64) {
	s.mu.Lock()
	if index > s.lastIndex {
		s.lastIndex = index
	}
	s.mu.Unlock()
}

// commit swaps in the transaction's tree and wakes the watchers of every key
// and kind it touched.
func (s *State) commit(t *txn) {
	s.mu.Lock()
	s.tree = t.txn.Commit()
	if t.index > s.lastIndex {
		s.lastIndex = t.index
	}
	for kind := range t.kinds {
		s.kindIndex[kind] = t.index
	}
	for kind, d := range t.kindDelta {
		s.kindCount[kind] += d
		if s.kindCount[kind] == 0 {
			delete(s.kindCount, kind)
		}
	}
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

func (t *txn) touch(kind, name string) {
	t.kinds[kind] = struct{}{}
	t.keys[string(key(kind, name))] = struct{}{}
}

func (t *txn) put(p Put) error {
	if err := validKey(p.Kind, p.Name); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	data, err := compactData(p.Data)
	if err != nil {
		return fmt.Errorf("put %s/%s: data: %w: %w", p.Kind, p.Name, ErrInvalid, err)
	}
	if p.Kind == KindSecret && !checkSealed(data) {
		return fmt.Errorf("put %s/%s: %w", p.Kind, p.Name, ErrNotSealed)
	}
	cur := t.get(p.Kind, p.Name)
	if err := checkExpect(p.Kind, p.Name, cur, p.ExpectModifyIndex); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	obj := &Object{
		Kind: p.Kind, Name: p.Name,
		CreateIndex: t.index, ModifyIndex: t.index,
		CreateTime: t.time, ModifyTime: t.time,
		Data: data,
	}
	if cur != nil {
		obj.CreateIndex, obj.CreateTime = cur.CreateIndex, cur.CreateTime
	} else {
		t.kindDelta[p.Kind]++
	}
	t.txn.Insert(key(p.Kind, p.Name), obj)
	t.touch(p.Kind, p.Name)
	return nil
}

func (t *txn) delete(d Delete) error {
	if err := validKey(d.Kind, d.Name); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	cur := t.get(d.Kind, d.Name)
	if cur == nil {
		return fmt.Errorf("delete %s/%s: %w", d.Kind, d.Name, ErrNotFound)
	}
	if err := checkExpect(d.Kind, d.Name, cur, d.ExpectModifyIndex); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	t.txn.Delete(key(d.Kind, d.Name))
	t.kindDelta[d.Kind]--
	t.touch(d.Kind, d.Name)
	return nil
}

func (t *txn) batch(b Batch) error {
	for i, op := range b.Ops {
		var err error
		switch {
		case op.Put != nil && op.Delete == nil:
			err = t.put(*op.Put)
		case op.Delete != nil && op.Put == nil:
			err = t.delete(*op.Delete)
		default:
			err = fmt.Errorf("set exactly one of put and delete: %w", ErrInvalid)
		}
		if err != nil {
			return fmt.Errorf("batch op %d: %w", i, err)
		}
	}
	if b.Audit != nil {
		return t.appendAudit(*b.Audit)
	}
	return nil
}

func (t *txn) appendAudit(a AppendAudit) error {
	name := AuditName(t.index)
	if err := t.put(Put{Kind: KindAudit, Name: name, Data: a.Entry}); err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	over := t.counts(KindAudit) + t.kindDelta[KindAudit] - AuditRetain
	if over <= 0 {
		return nil
	}
	var oldest [][]byte
	t.txn.Root().WalkPrefix(key(KindAudit, ""), func(k []byte, _ any) bool {
		oldest = append(oldest, k)
		return len(oldest) == over
	})
	for _, k := range oldest {
		t.txn.Delete(k)
		t.kindDelta[KindAudit]--
		t.keys[string(k)] = struct{}{}
	}
	return nil
}

// compactData returns data compacted. Data decoded from a payload is one
// valid JSON value, and without a whitespace byte anywhere (what every
// writer's json.Marshal produces) it is compact already: it is kept as
// it is, which is what json.Compact would return, without scanning it
// again.
func compactData(data json.RawMessage) (json.RawMessage, error) {
	if len(data) > 0 && !bytes.ContainsAny(data, " \t\r\n") {
		return data, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
