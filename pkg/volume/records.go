package volume

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"kcore.dev/kcore/pkg/confined"
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
	// UUID is the filesystem UUID of a disk kcore formatted or adopted: a
	// disk under the same by-id name with another UUID is not this volume.
	UUID string `json:"uuid,omitempty"`
}

// recordsFile is the ownership record's name in StateDir.
const recordsFile = "volumes.json"

// MaxRecordsBytes caps the ownership record read back.
const MaxRecordsBytes = 16 << 20

// stateDir opens StateDir as a confined handle (creating it 0755): the
// record is read and written beneath it, never through a symlink.
func (m *Manager) stateDir() (*confined.Dir, error) {
	if err := os.MkdirAll(m.StateDir, 0o755); err != nil {
		return nil, err
	}
	return confined.Open(m.StateDir)
}

// Records returns the ownership record by volume name.
func (m *Manager) Records() (map[string]Record, error) { return m.loadRecords() }

func (m *Manager) loadRecords() (map[string]Record, error) {
	out := map[string]Record{}
	dir, err := m.stateDir()
	if err != nil {
		return nil, fmt.Errorf("load volume records: %w", err)
	}
	defer dir.Close()
	data, err := dir.ReadFile(recordsFile, MaxRecordsBytes)
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
	dir, err := m.stateDir()
	if err != nil {
		return fmt.Errorf("save volume records: %w", err)
	}
	defer dir.Close()
	if _, err := dir.WriteFile(recordsFile, bytes.NewReader(append(data, '\n')), 0o600); err != nil {
		return fmt.Errorf("save volume records: %w", err)
	}
	return nil
}
