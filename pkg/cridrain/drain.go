package cridrain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Bounds of one drain.
const (
	// DefaultTimeout bounds a whole drain: listing, stopping and removing
	// every sandbox.
	DefaultTimeout = 2 * time.Minute
	// DefaultCallTimeout bounds one CRI call.
	DefaultCallTimeout = 30 * time.Second
	// DefaultMaxSandboxes is the most sandboxes one drain stops and
	// removes; a runtime listing more is drained up to it and reported.
	DefaultMaxSandboxes = 1024
)

// ErrTooManySandboxes is returned when the runtime lists more sandboxes
// than Options.MaxSandboxes: the first ones are drained, the rest are not.
var ErrTooManySandboxes = errors.New("too many pod sandboxes")

// ErrEndpoint is returned for an endpoint that is not unix:///<path>.
var ErrEndpoint = errors.New("invalid CRI endpoint")

// Options bound a drain; zero fields take the defaults.
type Options struct {
	Timeout      time.Duration
	CallTimeout  time.Duration
	MaxSandboxes int
	Log          *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxSandboxes <= 0 {
		o.MaxSandboxes = DefaultMaxSandboxes
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// Drain stops and removes every pod sandbox (and so every container) the
// CRI at endpoint (unix:///<path>) lists. It tries every sandbox even when
// one fails, and returns every failure joined; it returns within
// Options.Timeout. A runtime that is not listening is an error too: the
// caller decides whether to go on without the drain.
func Drain(ctx context.Context, endpoint string, o Options) error {
	o = o.withDefaults()
	socket, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok || !strings.HasPrefix(socket, "/") {
		return fmt.Errorf("drain pods: endpoint %q is not unix:///<path>: %w", endpoint, ErrEndpoint)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("drain pods: connect to %s: %w", endpoint, err)
	}
	defer conn.Close()
	rt := cri.NewRuntimeServiceClient(conn)
	list, err := call(ctx, o, func(ctx context.Context) (*cri.ListPodSandboxResponse, error) {
		return rt.ListPodSandbox(ctx, &cri.ListPodSandboxRequest{}, grpc.WaitForReady(false))
	})
	if err != nil {
		return fmt.Errorf("drain pods: list sandboxes on %s: %w", endpoint, err)
	}
	items := list.GetItems()
	var errs []error
	if len(items) > o.MaxSandboxes {
		errs = append(errs, fmt.Errorf("drain pods: %d sandboxes on %s, draining the first %d: %w", len(items), endpoint, o.MaxSandboxes, ErrTooManySandboxes))
		items = items[:o.MaxSandboxes]
	}
	for _, sb := range items {
		id := sb.GetId()
		if _, err := call(ctx, o, func(ctx context.Context) (*cri.StopPodSandboxResponse, error) {
			return rt.StopPodSandbox(ctx, &cri.StopPodSandboxRequest{PodSandboxId: id})
		}); err != nil {
			errs = append(errs, fmt.Errorf("drain pods: stop sandbox %s: %w", id, err))
			continue
		}
		if _, err := call(ctx, o, func(ctx context.Context) (*cri.RemovePodSandboxResponse, error) {
			return rt.RemovePodSandbox(ctx, &cri.RemovePodSandboxRequest{PodSandboxId: id})
		}); err != nil {
			errs = append(errs, fmt.Errorf("drain pods: remove sandbox %s: %w", id, err))
			continue
		}
		o.Log.Info("removed pod sandbox", "endpoint", endpoint, "sandbox", id, "pod", sb.GetMetadata().GetNamespace()+"/"+sb.GetMetadata().GetName())
	}
	return errors.Join(errs...)
}

// call runs one CRI call under Options.CallTimeout.
func call[T any](ctx context.Context, o Options, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, o.CallTimeout)
	defer cancel()
	return f(ctx)
}
