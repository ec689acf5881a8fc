package store

import (
	"encoding/json"
	"fmt"

	"kcore.dev/kcore/pkg/version"
)

// SchemaBinary is the first schema whose log entries are written in the
// binary form (see wireBinary). Encode writes a command of an older
// schema in the JSON form that schema's builds wrote.
const SchemaBinary = 3

// MinWriteSchema is the oldest schema this build writes. A cluster whose
// members read less than version.Schema writes log entries and snapshots
// of an older schema, but never older than this one: schema 1 replicas
// cannot follow a cluster this build leads (upgrade them to schema 2
// first, as the rollout's schema gates require).
const MinWriteSchema = 2

// KindMember is the kind in which each controller replica records itself
// (name: its raft id; data: a JSON object whose "schema" is the schema its
// build reads and writes, 0 or absent when it recorded none). The store
// reads the recorded schemas to choose the schema the cluster writes.
const KindMember = "Member"

// ClusterSchema returns the schema a cluster writes when its members read
// the given schemas: the lowest of them and version.Schema, so every
// member reads what is written. A member that recorded no schema (0, an
// unknown reader) or one older than MinWriteSchema counts as
// MinWriteSchema. With no members it is version.Schema.
func ClusterSchema(reads []int) int {
	w := version.Schema
	for _, r := range reads {
		w = min(w, max(r, MinWriteSchema))
	}
	return w
}

// WriteSchema returns the schema the cluster writes (ClusterSchema) given
// the replicas whose ids are listed (the servers of the raft
// configuration): a listed id without a Member object counts as an
// unknown reader. With ids nil it uses every Member object the state
// holds, so every replica computes the same schema at the same index.
//
// A state without any Member object is a cluster whose first replica has
// not recorded itself yet (it does with its first write as leader), so
// every replica runs this build: it writes version.Schema. Replicas of
// every earlier release record themselves, so a cluster upgraded from one
// always holds Member objects.
func (s *State) WriteSchema(ids []string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.writeSchemaLocked(ids)
}

func (s *State) writeSchemaLocked(ids []string) int {
	if s.kindCount[KindMember] == 0 {
		return version.Schema
	}
	var reads []int
	if ids == nil {
		s.tree.Root().WalkPrefix(key(KindMember, ""), func(_ []byte, v any) bool {
			reads = append(reads, memberSchema(v.(*Object).Data))
			return false
		})
		return ClusterSchema(reads)
	}
	for _, id := range ids {
		r := 0
		if v, ok := s.tree.Get(key(KindMember, id)); ok {
			r = memberSchema(v.(*Object).Data)
		}
		reads = append(reads, r)
	}
	return ClusterSchema(reads)
}

// memberSchema is the schema a Member object's data records, 0 (unknown)
// when it records none or cannot be read.
func memberSchema(data []byte) int {
	var m struct {
		Schema int `json:"schema"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return 0
	}
	return m.Schema
}

// LimitReads makes the state read only log entries and snapshots of schema
// at most schema (version.Schema by default), refusing newer ones with
// ErrSchemaTooNew as a build of that schema would. It stands in for a
// replica of an older release in tests; it can only make the state refuse
// more. Call it before the state applies or restores anything.
func (s *State) LimitReads(schema int) error {
	if schema < 1 || schema > version.Schema {
		return fmt.Errorf("limit reads to schema %d: this build reads 1 to %d: %w", schema, version.Schema, ErrInvalid)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = schema
	return nil
}

// readSchema is the newest schema the state reads. Only writers (Apply,
// Restore) call it, under wmu, so LimitReads cannot race with them.
func (s *State) readSchema() int {
	if s.reads == 0 {
		return version.Schema
	}
	return s.reads
}
