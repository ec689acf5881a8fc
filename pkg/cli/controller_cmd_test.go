package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/gcbudget"
	"kcore.dev/kcore/pkg/server"
)

func TestControllerCommand(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		out     []string
		wantErr string
	}{
		{"help teaches 1 and 3 replicas", []string{"--help"}, []string{"--bootstrap", "--join", "--pki-dir", "--raft-listen", "--encryption-key", "Three replicas", "kctl controller init"}, ""},
		{"needs a data dir", []string{"--listen", "127.0.0.1:0", "--pki-dir", "p"}, nil, "--data-dir is required"},
		{"bootstrap excludes join", []string{"--data-dir", "d", "--pki-dir", "p", "--listen", "127.0.0.1:0", "--bootstrap", "--join", "x:1"}, nil, "exclude each other"},
		{"missing pki", []string{"--data-dir", t.TempDir(), "--pki-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--bootstrap"}, nil, "kctl controller init"},
		{"bad log level", []string{"--log-level", "loud"}, nil, "--log-level"},
		{"help names the node certificate grace", []string{"--help"}, []string{"--node-cert-grace", "720h0m0s", "0 turns it off"}, ""},
		{"negative grace", []string{"--node-cert-grace", "-1ns"}, nil, "--node-cert-grace -1ns: want 0 (off) or 1h0m0s to 2160h0m0s"},
		{"grace below the bound", []string{"--data-dir", "d", "--pki-dir", "p", "--listen", "127.0.0.1:0", "--node-cert-grace", "59m59s"}, nil, "--node-cert-grace"},
		{"grace above the bound", []string{"--data-dir", "d", "--pki-dir", "p", "--listen", "127.0.0.1:0", "--node-cert-grace", "2160h0m1s"}, nil, "--node-cert-grace"},
		{"help names the heap budget", []string{"--help"}, []string{"--gc-budget-mib", fmt.Sprintf("(default %d)", gcbudget.DefaultBudget>>20), "0 turns it off", "GOGC"}, ""},
		{"negative heap budget", []string{"--gc-budget-mib", "-1"}, nil, "--gc-budget-mib -1: want 0 (off) or a size in MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			cmd := NewController(Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			cmd.SetArgs(tt.args)
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.out {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
}

// TestNodeCertGraceFlag: --node-cert-grace 0 turns the grace off, a
// negative one is refused, and the bounds pass through to the config's
// check.
func TestNodeCertGraceFlag(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		0: server.NoNodeCertGrace, server.MinNodeCertGrace: server.MinNodeCertGrace,
		server.MaxNodeCertGrace: server.MaxNodeCertGrace, server.DefaultNodeCertGrace: server.DefaultNodeCertGrace,
	} {
		if got, err := nodeCertGrace(in); err != nil || got != want {
			t.Fatalf("nodeCertGrace(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := nodeCertGrace(-time.Nanosecond); err == nil {
		t.Fatal("a negative grace is taken")
	}
}
