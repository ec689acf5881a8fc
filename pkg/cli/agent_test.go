package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func runAgentCmd(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := NewAgent(Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestAgentCommandFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		out     string
		wantErr string
	}{
		{name: "help names the runtimes", args: []string{"--help"}, out: "supervisor, systemd or nixos"},
		{name: "version", args: []string{"version"}, out: "kcore-node-agent "},
		{name: "needs a node id", args: []string{"--controller", "127.0.0.1:1"}, wantErr: "--node-id"},
		{name: "bad runtime", args: []string{"--controller", "127.0.0.1:1", "--node-id", "n", "--runtime", "docker", "--root", t.TempDir()}, wantErr: "--runtime"},
		{name: "bad label", args: []string{"facts", "--label", "nolabel"}, wantErr: "--label"},
		{name: "one token source", args: []string{"--controller", "127.0.0.1:1", "--node-id", "n", "--root", t.TempDir(), "--join-token", "a", "--join-token-file", "f"}, wantErr: "exclude"},
		{name: "apply needs a file", args: []string{"apply"}, wantErr: "-f FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runAgentCmd(t, "", tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(out, tt.out) {
				t.Fatalf("out %q, err %v", out, err)
			}
		})
	}
}

func TestAgentApplyOffline(t *testing.T) {
	root := t.TempDir()
	ns := api.NodeState{Cluster: "lab", NodeID: "node-105", Generation: 4, Files: []api.File{
		{Path: "/etc/kubernetes/pki/apiserver.key", Mode: 0o600, Content: "KEY", Secret: true},
		{Path: "/etc/kcore/hello", Content: "hi"},
	}}
	data, _ := json.Marshal(ns)
	file := filepath.Join(t.TempDir(), "ns.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runAgentCmd(t, "", "apply", "-f", file, "--root", root, "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	var reports []api.NodeReport
	if err := json.Unmarshal([]byte(out), &reports); err != nil || len(reports) != 1 || reports[0].ObservedGeneration != 4 {
		t.Fatalf("reports %s (%v)", out, err)
	}
	st, err := os.Stat(filepath.Join(root, "etc/kubernetes/pki/apiserver.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key: %v %v", st, err)
	}
	if strings.Contains(out, "KEY") {
		t.Fatal("secret content printed")
	}

	// From stdin, as an array, with a path outside the allow-list: refused.
	bad := ns
	bad.Files = append(bad.Files, api.File{Path: "/etc/shadow", Content: "x"})
	data, _ = json.Marshal([]api.NodeState{bad})
	if _, err := runAgentCmd(t, string(data), "apply", "-f", "-", "--root", root, "--log-level", "error"); err == nil || !strings.Contains(err.Error(), "/etc/shadow") {
		t.Fatalf("bad path: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/shadow")); !os.IsNotExist(err) {
		t.Fatal("file outside the allow-list written")
	}
	if _, err := runAgentCmd(t, `{"cluster":"x","bogus":1}`, "apply", "-f", "-", "--root", root); err == nil {
		t.Fatal("unknown field accepted")
	}
}

func TestAgentFactsCommand(t *testing.T) {
	out, err := runAgentCmd(t, "", "facts", "--root", t.TempDir(), "--label", "kcore.dev/failure-domain=rack-1", "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	var f api.NodeFacts
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("facts %s: %v", out, err)
	}
	if f.Hostname == "" || f.Labels[api.FailureDomainLabel] != "rack-1" {
		t.Fatalf("facts %+v", f)
	}
}
