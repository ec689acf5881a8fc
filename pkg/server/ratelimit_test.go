package server

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

var limiterStart = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestLimiterBurstAndRefillAtTheBound(t *testing.T) {
	const burst = 3
	l := newSourceLimiter(2, burst, 10, nil)
	for i := range burst {
		if _, ok := l.take("a", limiterStart); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	wait, ok := l.take("a", limiterStart)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("past the burst: ok %v, wait %s; want refused, 500ms", ok, wait)
	}
	if got := retryAfter(wait); got != "1" {
		t.Fatalf("Retry-After %q, want 1 (rounded up)", got)
	}
	// Half a token is not enough; a whole one is.
	if _, ok := l.take("a", limiterStart.Add(250*time.Millisecond)); ok {
		t.Fatal("took half a token")
	}
	if _, ok := l.take("a", limiterStart.Add(500*time.Millisecond)); !ok {
		t.Fatal("refill of one token refused")
	}
	// A long pause refills to the burst, not beyond.
	later := limiterStart.Add(time.Hour)
	for i := range burst {
		if _, ok := l.take("a", later); !ok {
			t.Fatalf("request %d after a pause refused", i+1)
		}
	}
	if _, ok := l.take("a", later); ok {
		t.Fatal("a pause refilled past the burst")
	}
	// A clock that goes back refills nothing.
	if _, ok := l.take("a", limiterStart); ok {
		t.Fatal("a clock going back refilled tokens")
	}
}

func TestLimiterTracksAtMostMaxSources(t *testing.T) {
	const max = 4
	evicted := 0
	l := newSourceLimiter(1, 1, max, func() { evicted++ })
	for i := range max {
		l.take(fmt.Sprintf("10.0.0.%d", i), limiterStart)
	}
	if l.tracked() != max || evicted != 0 {
		t.Fatalf("at the bound: %d tracked, %d evicted; want %d, 0", l.tracked(), evicted, max)
	}
	// 10.0.0.0 is seen again, so 10.0.0.1 is the least recently seen.
	if _, ok := l.take("10.0.0.0", limiterStart); ok {
		t.Fatal("spent source allowed")
	}
	l.take("10.0.0.99", limiterStart)
	if l.tracked() != max || evicted != 1 {
		t.Fatalf("past the bound: %d tracked, %d evicted; want %d, 1", l.tracked(), evicted, max)
	}
	if _, ok := l.take("10.0.0.0", limiterStart); ok {
		t.Fatal("the recently seen source was forgotten")
	}
	if _, ok := l.take("10.0.0.1", limiterStart); !ok {
		t.Fatal("the least recently seen source was not the one forgotten")
	}
	for i := range 10 * max {
		l.take(fmt.Sprintf("10.1.0.%d", i), limiterStart)
	}
	if l.tracked() != max {
		t.Fatalf("%d sources tracked, want at most %d", l.tracked(), max)
	}
}

func TestSourceOf(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:5555":               "127.0.0.1",
		"[::ffff:10.1.2.3]:80":         "10.1.2.3",
		"[2001:db8:1:2:3:4:5:6]:443":   "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443":   "2001:db8:1:2::/64",
		"not an address":               sourceUnknown,
		"[fe80::1%eth0]:22":            "fe80::/64",
		"[2001:db8:1:3:3:4:5:6]:12345": "2001:db8:1:3::/64",
	} {
		if got := sourceOf(&http.Request{RemoteAddr: addr}); got != want {
			t.Errorf("sourceOf(%q) = %q, want %q", addr, got, want)
		}
	}
}
