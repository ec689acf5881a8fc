package store

import "context"

// Wait blocks until the object (kind, name) — or, with name "", any object
// of kind — is created, modified or deleted past afterIndex, and returns the
// new index (see KeyIndex). When ctx ends first it returns the current index
// and no error, so a blocking query that times out answers with what it has.
//
// If afterIndex is beyond LastIndex (the state was restored from an older
// snapshot, or this replica lags the one the caller read from) Wait returns
// at once; a caller that sees the index go backwards re-reads and waits from
// the returned index.
//
// Waiters share one channel per key and one per kind, closed on change, so
// thousands of waiters cost one channel each key, not a poll each.
func (s *State) Wait(ctx context.Context, kind, name string, afterIndex uint64) (uint64, error) {
	for {
		s.watchMu.Lock()
		s.mu.RLock()
		idx, last := s.keyIndexLocked(kind, name), s.lastIndex
		s.mu.RUnlock()
		if idx > afterIndex || afterIndex > last {
			s.watchMu.Unlock()
			return idx, nil
		}
		ch := s.watchChanLocked(kind, name)
		s.watchMu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return s.KeyIndex(kind, name), nil
		}
	}
}

func (s *State) watchChanLocked(kind, name string) chan struct{} {
	m, k := s.keyWatch, string(key(kind, name))
	if name == "" {
		m, k = s.kindWatch, kind
	}
	ch, ok := m[k]
	if !ok {
		ch = make(chan struct{})
		m[k] = ch
	}
	return ch
}

// notify wakes the waiters of the given keys and kinds.
func (s *State) notify(keys map[string]struct{}, kinds map[string]uint64) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	for k := range keys {
		if ch, ok := s.keyWatch[k]; ok {
			close(ch)
			delete(s.keyWatch, k)
		}
	}
	for k := range kinds {
		if ch, ok := s.kindWatch[k]; ok {
			close(ch)
			delete(s.kindWatch, k)
		}
	}
}

// notifyAll wakes every waiter, after a restore replaced the whole state.
func (s *State) notifyAll() {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	for k, ch := range s.keyWatch {
		close(ch)
		delete(s.keyWatch, k)
	}
	for k, ch := range s.kindWatch {
		close(ch)
		delete(s.kindWatch, k)
	}
}
