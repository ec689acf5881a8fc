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
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/confined"
)

// DefaultFileMode applies to a File without a mode.
const DefaultFileMode = 0o644

// Bounds on decoded file content (Applier.MaxFileBytes, MaxStateBytes).
const (
	// DefaultMaxFileBytes caps one file's decoded content.
	DefaultMaxFileBytes = 64 << 20
	// DefaultMaxStateBytes caps the decoded content of all files of one NodeState.
	DefaultMaxStateBytes = 256 << 20
)

// ErrTooLarge refuses content whose decoded size passes a cap.
var ErrTooLarge = errors.New("content too large")

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

// decoder streams f's decoded bytes as its Encoding says; Close releases it.
func decoder(f api.File) (io.ReadCloser, error) {
	switch f.Encoding {
	case "":
		return io.NopCloser(strings.NewReader(f.Content)), nil
	case api.EncodingBase64:
		return io.NopCloser(base64.NewDecoder(base64.StdEncoding, strings.NewReader(f.Content))), nil
	case api.EncodingGzipBase64:
		zr, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(f.Content)))
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", f.Path, err)
		}
		return zr, nil
	}
	return nil, fmt.Errorf("decode %s: unknown encoding %q", f.Path, f.Encoding)
}

// capped reads at most limit bytes from r and fails with ErrTooLarge on
// the byte after them, so no more than limit+1 bytes are ever decoded.
type capped struct {
	r     io.Reader
	path  string
	limit int64
	n     int64
}

func (c *capped) Read(p []byte) (int, error) {
	if int64(len(p)) > c.limit+1-c.n {
		p = p[:c.limit+1-c.n]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.limit {
		return n, fmt.Errorf("decode %s: %w: larger than %d bytes", c.path, ErrTooLarge, c.limit)
	}
	return n, err
}

// decoded is what measuring a file's decoded content found.
type decoded struct {
	size int64
	sum  [sha256.Size]byte
}

// measure decodes f without keeping it, up to limit bytes (ErrTooLarge past them).
func measure(f api.File, limit int64) (decoded, error) {
	var d decoded
	r, err := decoder(f)
	if err != nil {
		return d, err
	}
	defer r.Close()
	h := sha256.New()
	if d.size, err = io.Copy(h, &capped{r: r, path: f.Path, limit: limit}); err != nil {
		if !errors.Is(err, ErrTooLarge) {
			err = fmt.Errorf("decode %s: %w", f.Path, err)
		}
		return d, err
	}
	copy(d.sum[:], h.Sum(nil))
	return d, nil
}

// unchanged reports whether the regular file rel beneath dir has mode and
// the decoded content d already.
func unchanged(dir *confined.Dir, rel string, mode os.FileMode, d decoded) bool {
	cur, err := dir.OpenFile(rel)
	if err != nil {
		return false
	}
	defer cur.Close()
	st, err := cur.Stat()
	if err != nil || st.Mode().Perm() != mode || st.Size() != d.size {
		return false
	}
	h := sha256.New()
	if n, err := io.Copy(h, io.LimitReader(cur, d.size+1)); err != nil || n != d.size {
		return false
	}
	return bytes.Equal(h.Sum(nil), d.sum[:])
}

// writeFile writes f to rel beneath dir unless content and mode already
// match (d is f measured); it reports whether it wrote. The content is
// decoded again while it streams into the file, capped at d's size.
func writeFile(dir *confined.Dir, rel string, f api.File, d decoded) (bool, error) {
	mode := fileMode(f)
	if unchanged(dir, rel, mode, d) {
		return false, nil
	}
	r, err := decoder(f)
	if err != nil {
		return false, err
	}
	defer r.Close()
	n, err := dir.WriteFile(rel, &capped{r: r, path: f.Path, limit: d.size}, mode)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", f.Path, err)
	}
	if n != d.size {
		return false, fmt.Errorf("write %s: decoded %d bytes, measured %d", f.Path, n, d.size)
	}
	return true, nil
}

// RunDir is the runtime directory the agent creates under the root before
// it ensures any unit: units keep pid files there (keepalived's
// --pid/--vrrp_pid), and on a real host it is on a tmpfs that a reboot
// empties, so it is made again on every apply.
const RunDir = "/run/kcore"

// ensureRunDir creates RunDir under the root through the root's handle.
func (a *Applier) ensureRunDir() error {
	rel, err := Resolve(RunDir)
	if err == nil {
		err = a.host.MkdirAll(rel, 0o755)
	}
	if err != nil {
		return fmt.Errorf("create runtime directory: %w", err)
	}
	return nil
}
