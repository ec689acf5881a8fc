package store

import (
	"log/slog"
	"sync"

	iradix "github.com/hashicorp/go-immutable-radix"
)

// State is the replicated state: objects, the last applied index and the
// per-kind indexes. Apply and Restore are called by one writer (the raft FSM
// goroutine or a replay tool); reads and Wait are safe from any goroutine
// and never block the writer for long, because the object tree is immutable
// and each write swaps in a new root.
type State struct {
	log *slog.Logger

	// wmu serialises writers (Apply, Restore).
	wmu sync.Mutex
	// reads is the newest schema the state reads, 0 for version.Schema
	// (see LimitReads); guarded by wmu.
	reads int

	// mu guards the fields below it.
	mu        sync.RWMutex
	tree      *iradix.Tree
	lastIndex uint64
	kindIndex map[string]uint64
	kindCount map[string]int
	// dedup maps dedupKey(caller, id) to its *DedupRecord; dedupOrder
	// holds the same records by orderKey(index), oldest first.
	dedup      *iradix.Tree
	dedupOrder *iradix.Tree
	dedupLen   int
	// auditBytes is the sum of the audit entries' data sizes.
	auditBytes int64
	// retention is the audit policy last decoded (see txn.auditPolicy).
	retention retentionMemo

	// watchMu guards the watch channels. Lock order: watchMu, then mu.
	watchMu   sync.Mutex
	keyWatch  map[string]chan struct{}
	kindWatch map[string]chan struct{}
}

// New returns an empty state. log receives loud errors about refused log
// entries; nil discards them.
func New(log *slog.Logger) *State {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &State{
		log:        log,
		tree:       iradix.New(),
		kindIndex:  map[string]uint64{},
		kindCount:  map[string]int{},
		dedup:      iradix.New(),
		dedupOrder: iradix.New(),
		keyWatch:   map[string]chan struct{}{},
		kindWatch:  map[string]chan struct{}{},
	}
}

// Get returns the object (kind, name). The returned Data is shared with the
// store and must not be modified.
func (s *State) Get(kind, name string) (Object, bool) {
	v, ok := s.root().Get(key(kind, name))
	if !ok {
		return Object{}, false
	}
	return *v.(*Object), true
}

// List returns every object of kind, sorted by name.
func (s *State) List(kind string) []Object {
	return s.ListPrefix(kind, "")
}

// ListPrefix returns the objects of kind whose name starts with prefix,
// sorted by name.
func (s *State) ListPrefix(kind, prefix string) []Object {
	out := []Object{}
	s.root().Root().WalkPrefix(key(kind, prefix), func(_ []byte, v any) bool {
		out = append(out, *v.(*Object))
		return false
	})
	return out
}

// Count returns how many objects of kind are stored.
func (s *State) Count(kind string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.kindCount[kind]
}

// AuditBytes returns the sum of the audit entries' data sizes, what
// AuditRetention.MaxBytes bounds.
func (s *State) AuditBytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.auditBytes
}

// LastIndex returns the index of the last log entry processed, whether or
// not it changed anything.
func (s *State) LastIndex() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastIndex
}

// KindIndex returns the highest index at which an object of kind was
// created, modified or deleted; 0 if none ever was.
func (s *State) KindIndex(kind string) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.kindIndex[kind]
}

// KeyIndex returns the index a blocking query on (kind, name) starts from:
// the object's ModifyIndex when it exists, otherwise the kind's index (the
// object may have been deleted then). An empty name means the whole kind.
func (s *State) KeyIndex(kind, name string) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.keyIndexLocked(kind, name)
}

func (s *State) keyIndexLocked(kind, name string) uint64 {
	if name != "" {
		if v, ok := s.tree.Get(key(kind, name)); ok {
			return v.(*Object).ModifyIndex
		}
	}
	return s.kindIndex[kind]
}

func (s *State) root() *iradix.Tree {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tree
}
