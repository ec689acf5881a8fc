package cli

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func TestAskYes(t *testing.T) {
	tests := []struct {
		answer string
		want   bool
	}{
		{"y\n", true},
		{"Y\n", true},
		{"  yes  \n", true},
		{"YES", true},
		{"n\n", false},
		{"no\n", false},
		{"yes please\n", false},
		{"\n", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.answer), func(t *testing.T) {
			var out bytes.Buffer
			got, err := askYes(Streams{In: answer(tt.answer), Out: &out}, "Apply this plan?")
			if err != nil || got != tt.want {
				t.Fatalf("askYes(%q) = %v, %v; want %v", tt.answer, got, err, tt.want)
			}
			if !strings.HasPrefix(out.String(), "Apply this plan? [y/N] ") || !strings.HasSuffix(out.String(), "\n") {
				t.Fatalf("conversation %q", out.String())
			}
		})
	}
	if _, err := askYes(Streams{In: strings.NewReader("y\n"), Out: &bytes.Buffer{}}, "Apply?"); !errors.Is(err, errNoTTY) {
		t.Fatalf("non-terminal stdin = %v, want errNoTTY", err)
	}
}

// ttyOut is a standard output that says it is a terminal.
type ttyOut struct{ bytes.Buffer }

func (*ttyOut) IsTerminal() bool { return true }

func TestIsTTY(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name string
		v    any
		want bool
	}{
		{"reader", strings.NewReader(""), false},
		{"regular file", f, false},
		{"forced", answer(""), true},
		{"forced writer", &ttyOut{}, true},
	}
	for _, tt := range tests {
		if got := isTTY(tt.v); got != tt.want {
			t.Errorf("%s: isTTY = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestProgressRedrawsOnATerminal(t *testing.T) {
	out := &ttyOut{}
	p := &progress{w: out, tty: true, name: "lab", nodes: map[string]string{}}
	kc := &api.KubernetesCluster{Status: api.ClusterStatus{Phase: api.PhaseBootstrapping, Nodes: []api.NodeStatus{
		{NodeID: "node-105", Role: api.RoleControlPlane, Ready: true},
	}}}
	if err := p.show(kc); err != nil {
		t.Fatal(err)
	}
	kc.Status.Phase = api.PhaseReady
	if err := p.show(kc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "\r\x1b[2Klab: bootstrapping · control planes 1/1 ready · workers 0/0 ready") ||
		!strings.Contains(got, "\r\x1b[2Kcluster \"lab\": phase bootstrapping → ready\n") {
		t.Fatalf("terminal output %q", got)
	}
}

func TestColourOnlyOnATerminal(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	out := &ttyOut{}
	root := NewKctl(Streams{In: strings.NewReader(""), Out: out, Err: &bytes.Buffer{}})
	root.SetArgs([]string{"kubernetes", "plan", "-f", lab})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\x1b[") {
		t.Fatal("no colour on a terminal")
	}
	if plain := a.must("kubernetes", "plan", "-f", lab); strings.Contains(plain, "\x1b[") {
		t.Fatal("colour without a terminal")
	}
}
