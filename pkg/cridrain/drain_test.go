package cridrain

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeCRI is a CRI runtime service holding sandboxes by id: stopping one
// fails for the ids in failStop and waits for the call's end for the ids
// in hang (or for every id when hangAll).
type fakeCRI struct {
	cri.UnimplementedRuntimeServiceServer
	mu       sync.Mutex
	ids      []string
	stopped  []string
	failStop map[string]bool
	hang     map[string]bool
	hangAll  bool
}

func (f *fakeCRI) ListPodSandbox(context.Context, *cri.ListPodSandboxRequest) (*cri.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := &cri.ListPodSandboxResponse{}
	for _, id := range f.ids {
		resp.Items = append(resp.Items, &cri.PodSandbox{Id: id, Metadata: &cri.PodSandboxMetadata{Name: id, Namespace: "default"}})
	}
	return resp, nil
}

func (f *fakeCRI) StopPodSandbox(ctx context.Context, r *cri.StopPodSandboxRequest) (*cri.StopPodSandboxResponse, error) {
	f.mu.Lock()
	hang := f.hangAll || f.hang[r.PodSandboxId]
	fail := f.failStop[r.PodSandboxId]
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if fail {
		return nil, status.Error(codes.Internal, "cannot stop")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = append(f.stopped, r.PodSandboxId)
	return &cri.StopPodSandboxResponse{}, nil
}

func (f *fakeCRI) RemovePodSandbox(_ context.Context, r *cri.RemovePodSandboxRequest) (*cri.RemovePodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains(f.stopped, r.PodSandboxId) {
		return nil, status.Error(codes.FailedPrecondition, "sandbox not stopped")
	}
	f.ids = slices.DeleteFunc(f.ids, func(id string) bool { return id == r.PodSandboxId })
	return &cri.RemovePodSandboxResponse{}, nil
}

func (f *fakeCRI) left() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ids)
}

// serve runs f on a unix socket in a temporary directory and returns its
// endpoint.
func serve(t *testing.T, f *fakeCRI) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	cri.RegisterRuntimeServiceServer(s, f)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return "unix://" + sock
}

func sandboxes(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sb%03d", i)
	}
	return ids
}

func TestDrainRemovesEverySandbox(t *testing.T) {
	f := &fakeCRI{ids: sandboxes(3)}
	if err := Drain(context.Background(), serve(t, f), Options{}); err != nil {
		t.Fatal(err)
	}
	if left := f.left(); len(left) != 0 {
		t.Fatalf("sandboxes left: %v", left)
	}
}

// TestDrainMaxSandboxes: exactly MaxSandboxes are drained without error;
// one more leaves the last one and says so.
func TestDrainMaxSandboxes(t *testing.T) {
	const limit = 4
	f := &fakeCRI{ids: sandboxes(limit)}
	if err := Drain(context.Background(), serve(t, f), Options{MaxSandboxes: limit}); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	if left := f.left(); len(left) != 0 {
		t.Fatalf("at the bound, sandboxes left: %v", left)
	}
	f = &fakeCRI{ids: sandboxes(limit + 1)}
	err := Drain(context.Background(), serve(t, f), Options{MaxSandboxes: limit})
	if !errors.Is(err, ErrTooManySandboxes) {
		t.Fatalf("past the bound: %v, want ErrTooManySandboxes", err)
	}
	if left := f.left(); !slices.Equal(left, []string{sandboxes(limit + 1)[limit]}) {
		t.Fatalf("past the bound, sandboxes left: %v", left)
	}
}

// TestDrainCallTimeout: a sandbox whose stop never answers is given up
// after CallTimeout, and the others are still drained.
func TestDrainCallTimeout(t *testing.T) {
	f := &fakeCRI{ids: sandboxes(3), hang: map[string]bool{"sb001": true}}
	err := Drain(context.Background(), serve(t, f), Options{CallTimeout: 50 * time.Millisecond, Timeout: time.Hour})
	if !hasCode(err, codes.DeadlineExceeded) {
		t.Fatalf("hanging stop: %v, want a deadline error", err)
	}
	if left := f.left(); !slices.Equal(left, []string{"sb001"}) {
		t.Fatalf("sandboxes left: %v, want only the hanging one", left)
	}
}

// TestDrainTimeout: a runtime that answers no stop ends the whole drain at
// Timeout, however many sandboxes are left.
func TestDrainTimeout(t *testing.T) {
	f := &fakeCRI{ids: sandboxes(50), hangAll: true}
	err := Drain(context.Background(), serve(t, f), Options{Timeout: 100 * time.Millisecond, CallTimeout: time.Hour})
	if !hasCode(err, codes.DeadlineExceeded) {
		t.Fatalf("hanging runtime: %v, want a deadline error", err)
	}
	if left := f.left(); len(left) != 50 {
		t.Fatalf("%d sandboxes left, want 50", len(left))
	}
}

// TestDrainErrors: a stop that fails is reported and the others drained;
// a runtime not listening and an endpoint that is not a unix socket are
// errors.
func TestDrainErrors(t *testing.T) {
	f := &fakeCRI{ids: sandboxes(3), failStop: map[string]bool{"sb000": true}}
	err := Drain(context.Background(), serve(t, f), Options{})
	if !hasCode(err, codes.Internal) {
		t.Fatalf("failing stop: %v", err)
	}
	if left := f.left(); !slices.Equal(left, []string{"sb000"}) {
		t.Fatalf("sandboxes left: %v, want only the failing one", left)
	}
	gone := "unix://" + filepath.Join(t.TempDir(), "none.sock")
	if err := Drain(context.Background(), gone, Options{}); !hasCode(err, codes.Unavailable) {
		t.Fatalf("runtime not listening: %v, want unavailable", err)
	}
	if err := Drain(context.Background(), "tcp://127.0.0.1:1", Options{}); !errors.Is(err, ErrEndpoint) {
		t.Fatalf("tcp endpoint: %v, want ErrEndpoint", err)
	}
}

// hasCode reports whether err holds a CRI call's error with code c.
func hasCode(err error, c codes.Code) bool {
	for _, e := range flatten(err) {
		if s, ok := status.FromError(e); ok && e != nil && s.Code() == c {
			return true
		}
	}
	return false
}

// flatten lists err and every error it wraps.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch w := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range w.Unwrap() {
			out = append(out, flatten(e)...)
		}
	case interface{ Unwrap() error }:
		out = append(out, flatten(w.Unwrap())...)
	}
	return out
}
