package volume

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"kcore.dev/kcore/pkg/runtime"
)

// Record is what kcore knows about one volume. Owned is true only for
// volumes kcore created; only those are ever deleted.
type Record struct {
	Owned     bool   `json:"owned"`
	Class     string `json:"class"`
	Pool      string `json:"pool"`
	Device    string `json:"device"`
	Role      string `json:"role"`
	SizeBytes int64  `json:"sizeBytes"`
	// FSBytes is the volume size the filesystem was last made or grown for.
	FSBytes int64 `json:"fsBytes,omitempty"`
}

func (m *Manager) recordsPath() string { return filepath.Join(m.StateDir, "volumes.json") }

// Records returns the ownership record by volume name.
func (m *Manager) Records() (map[string]Record, error) { return m.loadRecords() }

func (m *Manager) loadRecords() (map[string]Record, error) {
	out := map[string]Record{}
	data, err := os.ReadFile(m.recordsPath())
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load volume records: %w", err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("load volume records: %w", err)
	}
	return out, nil
}

func (m *Manager) saveRecord(name string, rec Record) error {
	return m.updateRecords(func(all map[string]Record) { all[name] = rec })
}

func (m *Manager) dropRecord(name string) error {
	return m.updateRecords(func(all map[string]Record) { delete(all, name) })
}

func (m *Manager) updateRecords(fn func(map[string]Record)) error {
	all, err := m.loadRecords()
	if err != nil {
		return err
	}
	fn(all)
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return fmt.Errorf("save volume records: %w", err)
	}
	if err := runtime.WriteFileAtomic(m.recordsPath(), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("save volume records: %w", err)
	}
	return nil
}
