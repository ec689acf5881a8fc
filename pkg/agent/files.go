package agent

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/runtime"
)

// DefaultFileMode applies to a File without a mode.
const DefaultFileMode = 0o644

func fileMode(f api.File) os.FileMode {
	m := os.FileMode(f.Mode) & fs.ModePerm
	if m == 0 {
		return DefaultFileMode
	}
	return m
}

func contentHash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// writeFile writes f to path (already resolved) unless content and mode
// already match; it reports whether it wrote.
func writeFile(path string, f api.File) (bool, error) {
	mode := fileMode(f)
	content, err := fileBytes(f)
	if err != nil {
		return false, err
	}
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Mode().Perm() == mode {
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, content) {
			return false, nil
		}
	}
	if err := runtime.WriteFileAtomic(path, content, mode); err != nil {
		return false, err
	}
	return true, nil
}

// fileBytes decodes f's content as its Encoding says.
func fileBytes(f api.File) ([]byte, error) {
	switch f.Encoding {
	case "":
		return []byte(f.Content), nil
	case api.EncodingBase64, api.EncodingGzipBase64:
	default:
		return nil, fmt.Errorf("decode %s: unknown encoding %q", f.Path, f.Encoding)
	}
	raw, err := base64.StdEncoding.DecodeString(f.Content)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", f.Path, err)
	}
	if f.Encoding == api.EncodingBase64 {
		return raw, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", f.Path, err)
	}
	defer zr.Close()
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", f.Path, err)
	}
	return out, nil
}

// removeFile deletes a file kcore wrote; a missing file is fine.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// RunDir is the runtime directory the agent creates under the root before
// it ensures any unit: units keep pid files there (keepalived's
// --pid/--vrrp_pid), and on a real host it is on a tmpfs that a reboot
// empties, so it is made again on every apply.
const RunDir = "/run/kcore"

// ensureRunDir creates RunDir under the root (path-checked like any file).
func (a *Applier) ensureRunDir() error {
	p, err := Resolve(a.Root, RunDir)
	if err != nil {
		return fmt.Errorf("create runtime directory: %w", err)
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		return fmt.Errorf("create runtime directory: %w", err)
	}
	return nil
}
