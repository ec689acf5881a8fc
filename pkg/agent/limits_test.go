package agent

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// gzipped is f's content of n bytes as gzip+base64.
func gzipped(t *testing.T, path string, n int) api.File {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(bytes.Repeat([]byte{'z'}, n)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return api.File{Path: path, Encoding: api.EncodingGzipBase64, Content: base64.StdEncoding.EncodeToString(buf.Bytes())}
}

// TestDecodedSizeLimits applies states at and one byte past the per-file
// and per-state caps: at the cap everything is written, past it the whole
// state is refused with the file named and nothing written.
func TestDecodedSizeLimits(t *testing.T) {
	const file, state = 1000, 2500
	tests := []struct {
		name    string
		sizes   []int
		refused string // the file reported failed, "" when the state applies
		message string
	}{
		{"file at its cap", []int{file}, "", ""},
		{"file past its cap", []int{file + 1}, "/etc/kcore/0", "larger than 1000 bytes"},
		{"state at its cap", []int{file, file, state - 2*file}, "", ""},
		{"state past its cap", []int{file, file, state - 2*file + 1}, "/etc/kcore/2", "together are larger than 2500 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			a := newApplier(root, &fakeRuntime{}, execrun.NewRecorder())
			a.MaxFileBytes, a.MaxStateBytes = file, state
			var files []api.File
			for i, n := range tt.sizes {
				files = append(files, gzipped(t, fmt.Sprintf("/etc/kcore/%d", i), n))
			}
			ns := api.NodeState{Cluster: "c", NodeID: "n", Generation: 1, Files: files,
				Units: []api.Unit{{Name: "u", Argv: []string{"x"}, InputHash: "h"}}}
			reps, err := a.Apply(context.Background(), []api.NodeState{ns})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range reps[0].Items {
				switch {
				case tt.refused == "" && it.Kind == KindFile && it.State != api.ItemOK:
					t.Errorf("%s reported %+v, want ok", it.Name, it)
				case tt.refused != "" && it.Name == tt.refused:
					if it.State != api.ItemFailed || !strings.Contains(it.Message, tt.message) {
						t.Errorf("%s reported %+v, want failed with %q", it.Name, it, tt.message)
					}
				case tt.refused != "" && it.State != api.ItemPending:
					t.Errorf("%s %s of a refused state reported %+v, want pending", it.Kind, it.Name, it)
				}
			}
			for i, n := range tt.sizes {
				st, err := os.Stat(filepath.Join(root, "etc/kcore", fmt.Sprint(i)))
				if tt.refused == "" && (err != nil || st.Size() != int64(n)) {
					t.Errorf("file %d: %v, %v; want %d bytes", i, st, err, n)
				}
				if tt.refused != "" && err == nil {
					t.Errorf("file %d of a refused state was written", i)
				}
			}
		})
	}
}

// TestDecodedSizeDefaults checks the caps an Applier without options uses.
func TestDecodedSizeDefaults(t *testing.T) {
	a := &Applier{}
	if a.maxFileBytes() != DefaultMaxFileBytes || a.maxStateBytes() != DefaultMaxStateBytes {
		t.Fatalf("caps = %d, %d", a.maxFileBytes(), a.maxStateBytes())
	}
	if _, err := measure(gzipped(t, "/etc/kcore/x", 11), 10); err == nil {
		t.Fatal("measure past its limit succeeded")
	}
}
