package cli

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// TestAgentEtcdBackupOnce runs the command line render writes for a
// control plane's backup unit, with --once, against an etcd gateway over
// mutual TLS: the backup lands in the directory with its checksum, the
// client presented the certificate named on the command line, and a
// missing flag or an out-of-range one is refused before anything runs.
func TestAgentEtcdBackupOnce(t *testing.T) {
	c := &api.KubernetesCluster{
		Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: "lab"},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", APIServerEndpoint: "127.0.0.1:6443",
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "cp1", AdvertiseAddress: "127.0.0.1"}},
		},
	}
	c.Default()
	sec, err := pki.IssueClusterSecrets(c, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "db")
	writeEtcdDB(t, dbPath, 3)
	db, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	var clients []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clients = append(clients, r.TLS.PeerCertificates[0].Subject.CommonName)
		fmt.Fprintf(w, `{"result":{"blob":%q,"remainingBytes":"0"}}`+"\n", base64.StdEncoding.EncodeToString(db))
	}))
	cp := sec.ControlPlanes["cp1"]
	pair, err := tls.X509KeyPair(cp.EtcdServer.CertPEM, cp.EtcdServer.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(sec.EtcdCA.CertPEM)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()

	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// As the render rebases it for an agent with --root dir.
	backups := filepath.Join(dir, api.DefaultNodeBackupPath)
	args := render.EtcdBackupArgs{
		Cluster: "lab", Endpoint: srv.URL,
		CACert: write("ca.crt", sec.EtcdTrust()), Cert: write("client.crt", cp.APIServerEtcdClient.CertPEM),
		Key: write("client.key", cp.APIServerEtcdClient.KeyPEM), Dir: backups, Interval: time.Hour, Keep: 2,
	}
	argv := args.Argv()
	if _, err := runAgentCmd(t, "", append(argv[1:], "--once")...); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(backups)
	if err != nil || len(entries) != 2 {
		t.Fatalf("backup directory: %v %v", entries, err)
	}
	sum := sha256.Sum256(db)
	line, err := os.ReadFile(filepath.Join(backups, entries[1].Name()))
	if err != nil || !strings.HasPrefix(string(line), hex.EncodeToString(sum[:])+"  "+entries[0].Name()) {
		t.Fatalf("%s: %q %v", entries[1].Name(), line, err)
	}
	if len(clients) != 1 || !strings.Contains(clients[0], "etcd") {
		t.Fatalf("clients %v", clients)
	}
	// Not due again within the interval.
	if _, err := runAgentCmd(t, "", append(argv[1:], "--once")...); err != nil || len(clients) != 1 {
		t.Fatalf("second pass: %v, %d snapshots taken", err, len(clients))
	}

	for _, tc := range []struct{ drop, add, want string }{
		{drop: "--" + render.EtcdBackupFlagDir + "=", want: "--dir is required"},
		{add: "--" + render.EtcdBackupFlagKeep + "=101", want: "--keep must be between 1 and 100"},
		{add: "--" + render.EtcdBackupFlagInterval + "=30s", want: "--interval must be between"},
		{add: "--" + render.EtcdBackupFlagDir + "=" + filepath.Join(dir, "backups"), want: "is not an absolute path in " + api.NodeBackupRoot},
		{add: "--" + render.EtcdBackupFlagDir + "=var/backups/kcore", want: "is not an absolute path in " + api.NodeBackupRoot},
	} {
		var a []string
		for _, s := range argv[1:] {
			if tc.drop == "" || !strings.HasPrefix(s, tc.drop) {
				a = append(a, s)
			}
		}
		if tc.add != "" {
			a = append(a, tc.add)
		}
		if _, err := runAgentCmd(t, "", append(a, "--once")...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", a, err, tc.want)
		}
	}
}
