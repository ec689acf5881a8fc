package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

func TestNixOSWritesStateAndSwitches(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rec := execrun.NewRecorder()
	n, err := NewNixOS(root, "/run/current-system/sw/bin", rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	cilium := api.Unit{Name: "kcore-kubernetes-cilium", Argv: []string{"cilium", "install"}, Oneshot: true, InputHash: "c1"}
	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{name: "first flush switches", do: func() error {
			n.Ensure(ctx, etcdUnit())
			n.Ensure(ctx, cilium)
			return n.Flush(ctx)
		}, want: []string{"nixos-rebuild switch"}},
		{name: "nothing changed", do: func() error {
			n.Ensure(ctx, etcdUnit())
			return n.Flush(ctx)
		}},
		{name: "removing a unit switches", do: func() error {
			n.Stop(ctx, cilium.Name)
			return n.Flush(ctx)
		}, want: []string{"nixos-rebuild switch"}},
	}
	for _, st := range steps {
		rec.Reset()
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := rec.Commands(); strings.Join(got, "\n") != strings.Join(st.want, "\n") {
			t.Fatalf("%s: commands %q, want %q", st.name, got, st.want)
		}
	}
	data, err := os.ReadFile(filepath.Join(root, NixOSStatePath))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "node-state.json", string(data))

	// A fresh runtime on the same root knows the units and does not switch again.
	n2, err := NewNixOS(root, "/run/current-system/sw/bin", rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	if changed, _ := n2.Ensure(ctx, etcdUnit()); changed {
		t.Fatal("reloaded runtime saw a change")
	}
	if err := n2.Flush(ctx); err != nil || len(rec.Commands()) != 0 {
		t.Fatalf("flush after reload: %v, %q", err, rec.Commands())
	}
}

func TestNixOSRetriesAFailedSwitch(t *testing.T) {
	ctx := context.Background()
	rec := execrun.NewRecorder().OnExit("nixos-rebuild switch", 1, "error: evaluation aborted")
	rec.On("nixos-rebuild switch", execrun.Result{}, nil)
	n, err := NewNixOS(t.TempDir(), "", rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	n.Ensure(ctx, etcdUnit())
	var ee *execrun.ExitError
	if err := n.Flush(ctx); !errors.As(err, &ee) {
		t.Fatalf("first flush = %v, want the rebuild failure", err)
	}
	if err := n.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(rec.Commands()); got != 2 {
		t.Fatalf("%d rebuilds, want 2 (the failed one retried)", got)
	}
}
