package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"kcore.dev/kcore/pkg/confined"
)

// CredentialsDir holds the node certificate, key and controller CA, under the root (in AgentDir).
const CredentialsDir = AgentDir + "/agent"

// MaxCredentialBytes caps each credential file the agent reads back.
const MaxCredentialBytes = 1 << 20

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

// Credential file names in CredentialsDir.
const (
	certFile = "node.crt"
	keyFile  = "node.key"
	caFile   = "ca.crt"
)

// openCredentialsDir opens CredentialsDir (creating it 0700) through the
// agent directory's handle.
func openCredentialsDir(root string) (*confined.Dir, error) {
	agentDir, err := OpenAgentDir(root)
	if err != nil {
		return nil, err
	}
	defer agentDir.Close()
	return agentDir.Sub(strings.TrimPrefix(CredentialsDir, AgentDir+"/"), true, 0o700)
}

// LoadCredentials reads the stored credentials; ok is false when none are
// stored. A change interrupted by a crash is finished first.
func LoadCredentials(root string) (Credentials, bool, error) {
	dir, err := openCredentialsDir(root)
	if err != nil {
		return Credentials{}, false, fmt.Errorf("load credentials: %w", err)
	}
	defer dir.Close()
	if data, err := dir.ReadFile(pendingFile, 4*MaxCredentialBytes); err == nil {
		var c Credentials
		if err := json.Unmarshal(data, &c); err != nil || len(c.Cert) == 0 || len(c.Key) == 0 || len(c.CA) == 0 {
			// A torn journal cannot exist (it is written atomically); one
			// that does not decode is not ours to trust.
			return Credentials{}, false, fmt.Errorf("load credentials: %s/%s does not hold a whole credential set", CredentialsDir, pendingFile)
		}
		if err := storeIn(dir, c); err != nil {
			return Credentials{}, false, err
		}
		return c, true, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return Credentials{}, false, fmt.Errorf("load credentials: %w", err)
	}
	var c Credentials
	if c.Cert, err = dir.ReadFile(certFile, MaxCredentialBytes); errors.Is(err, os.ErrNotExist) {
		return Credentials{}, false, nil
	} else if err != nil {
		return Credentials{}, false, fmt.Errorf("load credentials: %w", err)
	}
	if c.Key, err = dir.ReadFile(keyFile, MaxCredentialBytes); err != nil {
		return Credentials{}, false, fmt.Errorf("load credentials: %w", err)
	}
	if c.CA, err = dir.ReadFile(caFile, MaxCredentialBytes); err != nil {
		return Credentials{}, false, fmt.Errorf("load credentials: %w", err)
	}
	return c, true, nil
}

// StoreCredentials replaces the stored credentials as one change: the new
// set goes to the journal first, then each file is replaced atomically
// (key 0600, the certificate last so a half-stored first set is never
// taken for a whole one), then the journal is removed.
func StoreCredentials(root string, c Credentials) error {
	dir, err := openCredentialsDir(root)
	if err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	defer dir.Close()
	return storeIn(dir, c)
}

// storeIn is StoreCredentials through an open CredentialsDir.
func storeIn(dir *confined.Dir, c Credentials) error {
	if err := dir.Chmod(0o700); err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	journal, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	if _, err := dir.WriteFile(pendingFile, bytes.NewReader(journal), 0o600); err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{{keyFile, c.Key, 0o600}, {caFile, c.CA, 0o644}, {certFile, c.Cert, 0o644}} {
		if _, err := dir.WriteFile(f.name, bytes.NewReader(f.data), f.mode); err != nil {
			return fmt.Errorf("store credentials: %w", err)
		}
	}
	if err := dir.Remove(pendingFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store credentials: %w", err)
	}
	return nil
}
