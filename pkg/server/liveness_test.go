package server

import (
	"testing"
	"time"
)

func TestLiveness(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := &Server{now: func() time.Time { return now }, lastSeen: map[string]time.Time{
		"fresh": now.Add(-10 * time.Second),
		"edge":  now.Add(-NodeReadyWindow),
		"stale": now.Add(-NodeReadyWindow - time.Second),
	}}
	for _, tc := range []struct {
		node      string
		ready, ok bool
		last      string
	}{
		{node: "never"},
		{node: "fresh", ready: true, ok: true, last: "2026-11-29T11:59:50Z"},
		{node: "edge", ready: true, ok: true, last: "2026-11-29T11:58:30Z"},
		{node: "stale", ok: true, last: "2026-11-29T11:58:29Z"},
	} {
		t.Run(tc.node, func(t *testing.T) {
			ready, last, ok := s.liveness(tc.node)
			if ready != tc.ready || last != tc.last || ok != tc.ok {
				t.Fatalf("liveness(%s) = %v, %q, %v; want %v, %q, %v", tc.node, ready, last, ok, tc.ready, tc.last, tc.ok)
			}
		})
	}
}
