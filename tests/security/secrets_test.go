package security

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
)

// TestSecretsEncryptedAtRest stores a Secret and greps the raft log (bbolt),
// the on-disk raft snapshots and a user snapshot for its plaintext.
func TestSecretsEncryptedAtRest(t *testing.T) {
	e := newEnv(t, 1)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	const plain = "cluster-ca-private-key-4f1d9c"
	path := apiv1.ObjectPath(apiv1.KindSecret, "c1-ca")
	want(t, e.call(admin, e.leader(), http.MethodPut, path, `{"key":"`+plain+`"}`), http.StatusOK, "")

	// No API returns it, not even to cluster-admin.
	for _, p := range []string{path, apiv1.ObjectPath(apiv1.KindSecret, "")} {
		r := e.call(admin, e.leader(), http.MethodGet, p, nil)
		want(t, r, http.StatusOK, "")
		if bytes.Contains(r.body, []byte(plain)) || bytes.Contains(r.body, []byte("ciphertext")) {
			t.Fatalf("GET %s returned secret data: %s", p, r.body)
		}
	}

	r := e.call(admin, e.leader(), http.MethodGet, apiv1.PathSnapshot, nil)
	want(t, r, http.StatusOK, "")
	if !bytes.Contains(r.body, []byte("c1-ca")) {
		t.Fatalf("snapshot does not hold the secret object at all: %.200s", r.body)
	}
	if bytes.Contains(r.body, []byte(plain)) {
		t.Fatal("user snapshot holds the plaintext")
	}

	leader := e.c.WaitLeader()
	var snap bytes.Buffer
	if _, err := leader.Node().Snapshot(context.Background(), &snap); err != nil {
		t.Fatal(err)
	}
	files := 0
	err := filepath.WalkDir(leader.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if bytes.Contains(b, []byte(plain)) {
			t.Errorf("%s holds the plaintext", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 2 {
		t.Fatalf("found %d files under %s, want the raft log and a snapshot", files, leader.DataDir)
	}
	// The sealed value is bound to its object: the store holds an envelope.
	o, _ := leader.Node().State().Get(apiv1.KindSecret, "c1-ca")
	if !strings.Contains(string(o.Data), `"alg":"AES-256-GCM"`) {
		t.Fatalf("stored secret %s is not an AES-256-GCM envelope", o.Data)
	}
}
