package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func TestBinaryPath(t *testing.T) {
	dir := t.TempDir()
	bin, rel := filepath.Join(dir, "bin"), filepath.Join(dir, "releases")
	for _, p := range []string{filepath.Join(bin, "kube-apiserver"), filepath.Join(rel, "v1.36.3", "kube-apiserver")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/true\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name        string
		version     string
		releasesDir string
		want        string
		err         error
	}{
		{"unpinned uses bin-dir", "", rel, filepath.Join(bin, "kube-apiserver"), nil},
		{"pinned uses its release", "v1.36.3", rel, filepath.Join(rel, "v1.36.3", "kube-apiserver"), nil},
		{"pinned to a missing release never falls back", "v1.37.2", rel, "", ErrReleaseMissing},
		{"no releases dir uses bin-dir", "v1.37.2", "", filepath.Join(bin, "kube-apiserver"), nil},
		{"a release cannot leave the releases dir", "../bin", rel, "", ErrInvalidUnit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := api.Unit{Name: "kcore-kube-apiserver", Argv: []string{"kube-apiserver"}, Version: tt.version}
			got, err := BinaryPath(u, bin, tt.releasesDir)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("path %q, want %q", got, tt.want)
			}
		})
	}
}
