package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Mode().Perm() == mode {
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, []byte(f.Content)) {
			return false, nil
		}
	}
	if err := runtime.WriteFileAtomic(path, []byte(f.Content), mode); err != nil {
		return false, err
	}
	return true, nil
}

// removeFile deletes a file kcore wrote; a missing file is fine.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
