package proccluster

import (
	"fmt"
	"io"
	"os"
)

// maxLogDump is how much of the end of each replica's log a failed test
// prints.
const maxLogDump = 32 << 10

func (c *Cluster) dumpLogs() {
	for _, r := range c.Replicas() {
		tail, err := tailFile(r.LogPath, maxLogDump)
		if err != nil {
			c.t.Logf("log of %s: %v", r.ID, err)
			continue
		}
		c.t.Logf("log of %s (last %d bytes at most):\n%s", r.ID, maxLogDump, tail)
	}
}

// tailFile returns the last limit bytes of the file at path.
func tailFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read log tail: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read log tail: %w", err)
	}
	if off := st.Size() - limit; off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, fmt.Errorf("read log tail: %w", err)
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, fmt.Errorf("read log tail: %w", err)
	}
	return b, nil
}
