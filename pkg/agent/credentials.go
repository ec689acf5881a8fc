package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"kcore.dev/kcore/pkg/runtime"
)

// CredentialsDir holds the node certificate, key and controller CA, under the root.
const CredentialsDir = "/var/lib/kcore/agent"

// Credentials are the node's identity towards the controller (PEM).
type Credentials struct {
	Cert []byte
	Key  []byte
	CA   []byte
}

func credentialPaths(root string) (cert, key, ca string) {
	dir := filepath.Join(root, CredentialsDir)
	return filepath.Join(dir, "node.crt"), filepath.Join(dir, "node.key"), filepath.Join(dir, "ca.crt")
}

// LoadCredentials reads the stored credentials; ok is false when none are stored.
func LoadCredentials(root string) (Credentials, bool, error) {
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

// StoreCredentials writes the credentials (key 0600) atomically, the
// certificate last so a half-stored set is never taken for a whole one.
func StoreCredentials(root string, c Credentials) error {
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
	return os.Chmod(filepath.Dir(certPath), 0o700)
}
