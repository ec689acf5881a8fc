package cli

import (
	"bytes"
	"strings"
	"testing"
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
