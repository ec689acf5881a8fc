package agent

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/confined"
)

// TestWriteEncodedFile writes files whose content is base64 or gzip+base64
// and checks the bytes on disk are the decoded ones, and that a second
// write of the same content writes nothing.
func TestWriteEncodedFile(t *testing.T) {
	want := []byte{0, 1, 2, 0xff, 'e', 't', 'c', 'd', '\n'}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		encoding string
		content  string
		wantErr  bool
	}{
		{"base64", api.EncodingBase64, base64.StdEncoding.EncodeToString(want), false},
		{"gzip+base64", api.EncodingGzipBase64, base64.StdEncoding.EncodeToString(gz.Bytes()), false},
		{"not base64", api.EncodingBase64, "%%%", true},
		{"not gzip", api.EncodingGzipBase64, base64.StdEncoding.EncodeToString(want), true},
		{"unknown encoding", "rot13", "x", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir, err := confined.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			defer dir.Close()
			const rel = "var/lib/etcd-restore/1/snapshot.db"
			path := filepath.Join(root, rel)
			f := api.File{Path: "/" + rel, Mode: 0o600, Content: tt.content, Encoding: tt.encoding, Secret: true}
			d, err := measure(f, DefaultMaxFileBytes)
			wrote := false
			if err == nil {
				wrote, err = writeFile(dir, rel, f, d)
			}
			if tt.wantErr {
				if err == nil {
					t.Fatal("writeFile succeeded, want an error")
				}
				return
			}
			if err != nil || !wrote {
				t.Fatalf("writeFile = %v, %v", wrote, err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("file holds %q, want %q", got, want)
			}
			if wrote, err := writeFile(dir, rel, f, d); err != nil || wrote {
				t.Fatalf("second writeFile = %v, %v, want no write", wrote, err)
			}
		})
	}
}
