package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"kcore.dev/kcore/pkg/runtime"
)

// CredentialsDir holds the node certificate, key and controller CA, under the root.
const CredentialsDir = "/var/lib/kcore/agent"

// pendingFile is the journal of a credentials change: the whole new set,
// written (0600) before node.key, ca.crt and node.crt are replaced and
// removed after. A crash between the replacements leaves it behind, and the
// next load finishes the change, so a key is never paired with another
// key's certificate.
const pendingFile = "pending.json"

// Credentials are the node's identity towards the controller (PEM).
type Credentials struct {
	Cert []byte `json:"cert"`
	Key  []byte `json:"key"`
	CA   []byte `json:"ca"`
}

func credentialPaths(root string) (cert, key, ca string) {
	dir := filepath.Join(root, CredentialsDir)
	return filepath.Join(dir, "node.crt"), filepath.Join(dir, "node.key"), filepath.Join(dir, "ca.crt")
}

func pendingPath(root string) string { return filepath.Join(root, CredentialsDir, pendingFile) }

// LoadCredentials reads the stored credentials; ok is false when none are
// stored. A change interrupted by a crash is finished first.
func LoadCredentials(root string) (Credentials, bool, error) {
	if data, err := os.ReadFile(pendingPath(root)); err == nil {
		var c Credentials
		if err := json.Unmarshal(data, &c); err != nil || len(c.Cert) == 0 || len(c.Key) == 0 || len(c.CA) == 0 {
			// A torn journal cannot exist (it is written atomically); one
			// that does not decode is not ours to trust.
			return Credentials{}, false, fmt.Errorf("load credentials: %s does not hold a whole credential set", pendingPath(root))
		}
		if err := StoreCredentials(root, c); err != nil {
			return Credentials{}, false, err
		}
		return c, true, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return Credentials{}, false, fmt.Errorf("load credentials: %w", err)
	}
	certPath, keyPath, caPath := credentialPaths(root)
	var c Credentials
	var err error
	if c.Cert, err = os.ReadFile(certPath); errors.Is(err, os.ErrNotExist) {
		return Credentials{}, false, nil
	} else if err != nil {
		return Credentials{}, false, fmt.Errorf("load credentials: %w", err)
	}
	if c.Key, err = os.ReadFile(keyPath); err != nil {
		return Credentials{}, false, fmt.Errorf("load credentials: %w", err)
	}
	if c.CA, err = os.ReadFile(caPath); err != nil {
		return Credentials{}, false, fmt.Errorf("load credentials: %w", err)
	}
	return c, true, nil
}

// StoreCredentials replaces the stored credentials as one change: the new
// set goes to the journal first, then each file is replaced atomically
// (key 0600, the certificate last so a half-stored first set is never
// taken for a whole one), then the journal is removed.
func StoreCredentials(root string, c Credentials) error {
	journal, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	if err := runtime.WriteFileAtomic(pendingPath(root), journal, 0o600); err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	certPath, keyPath, caPath := credentialPaths(root)
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{keyPath, c.Key, 0o600}, {caPath, c.CA, 0o644}, {certPath, c.Cert, 0o644}} {
		if err := runtime.WriteFileAtomic(f.path, f.data, f.mode); err != nil {
			return fmt.Errorf("store credentials: %w", err)
		}
	}
	if err := os.Remove(pendingPath(root)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store credentials: %w", err)
	}
	return os.Chmod(filepath.Dir(certPath), 0o700)
}
