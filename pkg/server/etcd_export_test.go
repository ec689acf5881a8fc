package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/store"
)

// etcdDBFile is a bbolt database shaped like etcd's at revision rev.
func etcdDBFile(t *testing.T, rev int64) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("key"))
		if err != nil {
			return err
		}
		for r := int64(1); r <= rev; r++ {
			k := make([]byte, 17)
			binary.BigEndian.PutUint64(k, uint64(r))
			k[8] = '_'
			if err := b.Put(k, []byte("a Kubernetes Secret: hunter2")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// withFile gives the env's server a snapshot directory and stores one
// snapshot there (metadata in the store); it returns the snapshot and its
// content.
func (e *etcdRouteEnv) withFile() (apiv1.EtcdSnapshotInfo, []byte) {
	e.t.Helper()
	e.s.snapFiles = &etcdsnap.Files{Dir: e.t.TempDir(), Sealer: e.s.keyring}
	raw := etcdDBFile(e.t, 7)
	sum := sha256.Sum256(raw)
	snap := &etcdsnap.Snapshot{Data: raw, Member: "cp1", SHA256: hex.EncodeToString(sum[:]), Revision: 7}
	res, err := etcdsnap.StoreFile(e.s.snapFiles, e.be.ID(), e.be.st, "lab", snap, etcdsnap.ReasonScheduled, time.Now().Add(time.Minute), 3, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd, _ := store.Batch{Ops: res.Ops}.Command()
	if _, err := e.be.Apply(context.Background(), cmd); err != nil {
		e.t.Fatal(err)
	}
	return res.Info, raw
}

// TestEtcdExportRoles: exporting a snapshot hands out the cluster's
// Secrets, so only operators (and cluster-admin) may; the sealed file
// route serves other replicas only; importing is an operator's.
func TestEtcdExportRoles(t *testing.T) {
	tests := []struct {
		name, role, method, route string
		want                      int
	}{
		{"viewer exports", apiv1.RoleViewer, http.MethodGet, "export", http.StatusForbidden},
		{"node exports", apiv1.RoleNode, http.MethodGet, "export", http.StatusForbidden},
		{"controller exports", apiv1.RoleController, http.MethodGet, "export", http.StatusForbidden},
		{"operator exports", apiv1.RoleOperator, http.MethodGet, "export", http.StatusOK},
		{"cluster-admin exports", apiv1.RoleClusterAdmin, http.MethodGet, "export", http.StatusOK},
		{"viewer reads the file", apiv1.RoleViewer, http.MethodGet, "file", http.StatusForbidden},
		{"operator reads the file", apiv1.RoleOperator, http.MethodGet, "file", http.StatusForbidden},
		{"node reads the file", apiv1.RoleNode, http.MethodGet, "file", http.StatusForbidden},
		{"controller reads the file", apiv1.RoleController, http.MethodGet, "file", http.StatusOK},
		{"viewer imports", apiv1.RoleViewer, http.MethodPost, "import", http.StatusForbidden},
		{"node imports", apiv1.RoleNode, http.MethodPost, "import", http.StatusForbidden},
		{"controller imports", apiv1.RoleController, http.MethodPost, "import", http.StatusForbidden},
		{"operator imports", apiv1.RoleOperator, http.MethodPost, "import", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
			info, raw := e.withFile()
			short := strings.TrimPrefix(info.Name, "lab/")
			path, body := apiv1.EtcdSnapshotPath("lab", short), ""
			switch tt.route {
			case "file":
				path += "/file"
			case "import":
				path, body = apiv1.EtcdSnapshotImportPath("lab"), string(raw)
			}
			code, got := e.call(tt.role, tt.method, path, body)
			if code != tt.want {
				t.Fatalf("%s %s as %s = %d %.200s, want %d", tt.method, path, tt.role, code, got, tt.want)
			}
			if code != http.StatusOK && strings.Contains(got, "hunter2") {
				t.Fatalf("refusal holds content: %s", got)
			}
			if tt.route == "file" && code == http.StatusOK && strings.Contains(got, "hunter2") {
				t.Fatal("the file route sent the snapshot in clear")
			}
		})
	}
}

// TestEtcdExportRoundTrip: the export is the etcd database whose SHA-256 the
// store recorded; importing it back keeps a verified snapshot with the same
// checksum that the restore route accepts; garbage is refused.
func TestEtcdExportRoundTrip(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
	info, raw := e.withFile()
	r := httptest.NewRequest(http.MethodGet, apiv1.EtcdSnapshotPath("lab", strings.TrimPrefix(info.Name, "lab/")), nil)
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "alice", Organization: []string{apiv1.RoleOperator}}}
	r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}
	w := httptest.NewRecorder()
	e.s.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("export = %d %s", w.Code, w.Body.String())
	}
	sum := sha256.Sum256(w.Body.Bytes())
	if hex.EncodeToString(sum[:]) != info.SHA256 || !bytes.Equal(w.Body.Bytes(), raw) {
		t.Fatal("the export is not the snapshot the store recorded")
	}
	var hdr apiv1.EtcdSnapshotInfo
	if err := json.Unmarshal([]byte(w.Header().Get(apiv1.HeaderEtcdSnapshot)), &hdr); err != nil || hdr.SHA256 != info.SHA256 {
		t.Fatalf("metadata header %q: %v", w.Header().Get(apiv1.HeaderEtcdSnapshot), err)
	}
	if !e.audited("GET /v1/clusters/{name}/etcd/snapshots/{snapshot}", http.StatusOK) {
		t.Error("export not audited")
	}

	code, body := e.call(apiv1.RoleOperator, http.MethodPost, apiv1.EtcdSnapshotImportPath("lab"), w.Body.String())
	var imported apiv1.EtcdSnapshotInfo
	if err := json.Unmarshal([]byte(body), &imported); code != http.StatusOK || err != nil {
		t.Fatalf("import = %d %s", code, body)
	}
	if imported.SHA256 != info.SHA256 || imported.Reason != etcdsnap.ReasonImported || imported.Revision != 7 || imported.Location != apiv1.EtcdSnapshotOnController {
		t.Fatalf("imported %+v", imported)
	}
	if o, _ := e.be.st.Get(apiv1.KindEtcdSnapshot, imported.Name); bytes.Contains(o.Data, []byte("ciphertext")) {
		t.Fatal("the imported snapshot's content went into the store")
	}
	if code, body := e.call(apiv1.RoleOperator, http.MethodPost, apiv1.EtcdRestorePath("lab"), `{"snapshot":"`+imported.Name+`"}`); code != http.StatusOK {
		t.Fatalf("restore of the imported snapshot = %d %s", code, body)
	}
	if code, body := e.call(apiv1.RoleOperator, http.MethodPost, apiv1.EtcdSnapshotImportPath("lab"), "not an etcd database"); code != http.StatusBadRequest {
		t.Fatalf("import of garbage = %d %s, want 400", code, body)
	}
	if code, _ := e.call(apiv1.RoleOperator, http.MethodGet, apiv1.EtcdSnapshotPath("lab", "20200101T000000Z-none"), ""); code != http.StatusNotFound {
		t.Fatalf("export of an unknown snapshot = %d, want 404", code)
	}
}
