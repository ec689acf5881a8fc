package store

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// waitResult runs Wait in a goroutine and returns a channel with its index.
func waitAsync(s *State, ctx context.Context, kind, name string, after uint64) <-chan uint64 {
	ch := make(chan uint64, 1)
	go func() {
		idx, _ := s.Wait(ctx, kind, name, after)
		ch <- idx
	}()
	return ch
}

func TestWait(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		trigger func(t *testing.T) Command
	}{
		{"object update", "a", func(t *testing.T) Command { return putCmd(t, "Node", "a", `2`, nil) }},
		{"object delete", "a", func(t *testing.T) Command { return delCmd(t, "Node", "a", nil) }},
		{"object create", "new", func(t *testing.T) Command { return putCmd(t, "Node", "new", `1`, nil) }},
		{"object in batch", "a", func(t *testing.T) Command { return batchCmd(t, putOp("Node", "x", `5`, nil), delOp("Node", "a", nil)) }},
		{"kind on create", "", func(t *testing.T) Command { return putCmd(t, "Node", "c", `1`, nil) }},
		{"kind on delete", "", func(t *testing.T) Command { return delCmd(t, "Node", "b", nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(nil)
			s.Apply(1, putCmd(t, "Node", "a", `1`, nil))
			s.Apply(2, putCmd(t, "Node", "b", `1`, nil))
			after := s.KeyIndex("Node", tt.key)
			got := waitAsync(s, context.Background(), "Node", tt.key, after)
			ch := registered(t, s, "Node", tt.key)
			// Unrelated changes (another kind; another object of the kind
			// for an object waiter) and failed commands must not wake it.
			unrelated := []Op{putOp("Other", "a", `1`, nil)}
			if tt.key != "" {
				unrelated = append(unrelated, putOp("Node", "unrelated", `1`, nil))
			}
			s.Apply(3, batchCmd(t, unrelated...))
			s.Apply(4, putCmd(t, "Node", tt.key+"x", `1`, Expect(99)))
			select {
			case <-ch:
				t.Fatal("waiter woken by an unrelated change")
			default:
			}
			s.Apply(5, tt.trigger(t))
			if idx := <-got; idx != 5 {
				t.Fatalf("Wait = %d, want 5", idx)
			}
		})
	}
}

// registered polls until a waiter has registered its channel for (kind,
// name), and returns that channel.
func registered(t *testing.T, s *State, kind, name string) chan struct{} {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.watchMu.Lock()
		m, k := s.keyWatch, string(key(kind, name))
		if name == "" {
			m, k = s.kindWatch, kind
		}
		ch, ok := m[k]
		s.watchMu.Unlock()
		if ok {
			return ch
		}
		runtime.Gosched()
	}
	t.Fatal("waiter never registered")
	return nil
}

func TestWaitReturnsAtOnceWhenAlreadyPast(t *testing.T) {
	s := New(nil)
	s.Apply(1, putCmd(t, "Node", "a", `1`, nil))
	s.Apply(2, putCmd(t, "Node", "a", `2`, nil))
	idx, err := s.Wait(context.Background(), "Node", "a", 1)
	if err != nil || idx != 2 {
		t.Fatalf("Wait = %d, %v", idx, err)
	}
}

func TestWaitTimeoutReturnsCurrentIndex(t *testing.T) {
	s := New(nil)
	s.Apply(1, putCmd(t, "Node", "a", `1`, nil))
	ctx, cancel := context.WithCancel(context.Background())
	got := waitAsync(s, ctx, "Node", "a", 1)
	cancel()
	if idx := <-got; idx != 1 {
		t.Fatalf("Wait after cancel = %d, want 1", idx)
	}
}

func TestWaitWakesOnRestore(t *testing.T) {
	s := New(nil)
	s.Apply(1, putCmd(t, "Node", "a", `1`, nil))
	old := s.Snapshot().Bytes()
	s.Apply(2, putCmd(t, "Node", "a", `2`, nil))
	got := waitAsync(s, context.Background(), "Node", "a", 2)
	if err := s.Restore(bytesReaderOf(old)); err != nil {
		t.Fatal(err)
	}
	if idx := <-got; idx != 1 {
		t.Fatalf("Wait after restore = %d, want 1 (index went backwards)", idx)
	}
}

func TestWaitManyWaiters(t *testing.T) {
	s := New(nil)
	s.Apply(1, putCmd(t, "Node", "a", `1`, nil))
	const n = 5000
	var wg sync.WaitGroup
	results := make(chan uint64, n)
	ready := make(chan struct{}, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "a"
			if i%2 == 0 {
				name = ""
			}
			ready <- struct{}{}
			idx, _ := s.Wait(context.Background(), "Node", name, 1)
			results <- idx
		}()
	}
	for range n {
		<-ready
	}
	s.Apply(2, putCmd(t, "Node", "a", `2`, nil))
	wg.Wait()
	close(results)
	for idx := range results {
		if idx != 2 {
			t.Fatalf("waiter got %d, want 2", idx)
		}
	}
}
