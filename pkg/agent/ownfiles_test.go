package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnFilesReadBackAtTheirCaps stores credentials and a state file at
// their read-back caps (read) and one byte past them (refused).
func TestOwnFilesReadBackAtTheirCaps(t *testing.T) {
	for _, extra := range []int{0, 1} {
		root := t.TempDir()
		cert := bytes.Repeat([]byte{'c'}, MaxCredentialBytes+extra)
		if err := StoreCredentials(root, Credentials{Cert: cert, Key: []byte("k"), CA: []byte("ca")}); err != nil {
			t.Fatal(err)
		}
		got, ok, err := LoadCredentials(root)
		if extra == 0 && (err != nil || !ok || !bytes.Equal(got.Cert, cert)) {
			t.Errorf("credentials at the cap: %v, %v", ok, err)
		}
		if extra == 1 && err == nil {
			t.Error("credentials past the cap were read")
		}
		state := `{"clusters":{}}`
		state += strings.Repeat(" ", MaxStateFileBytes+extra-len(state))
		if err := os.WriteFile(filepath.Join(root, StatePath), []byte(state), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadState(root); (err != nil) != (extra == 1) {
			t.Errorf("state file %d bytes past the cap: %v", extra, err)
		}
	}
}

// TestStoreCredentialsKeepsTheKeyPrivate checks the modes of the stored
// credentials and their directory.
func TestStoreCredentialsKeepsTheKeyPrivate(t *testing.T) {
	root := t.TempDir()
	if err := StoreCredentials(root, Credentials{Cert: []byte("c"), Key: []byte("k"), CA: []byte("ca")}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{CredentialsDir: 0o700, CredentialsDir + "/node.key": 0o600, CredentialsDir + "/node.crt": 0o644} {
		st, err := os.Stat(filepath.Join(root, name))
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %o", name, st, err, want)
		}
	}
}
