package etcdsnap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// stream is what the gateway sends for data in chunks of size, with the
// remaining byte count spelled as the gateway does (a string), under key.
func stream(data []byte, size int, key string) string {
	var b strings.Builder
	for off := 0; off < len(data); off += size {
		end := min(off+size, len(data))
		rem := ""
		if left := len(data) - end; left > 0 {
			rem = fmt.Sprintf(`,%q:"%d"`, key, left)
		}
		fmt.Fprintf(&b, `{"result":{"header":{"revision":"7"},"blob":"%s"%s}}`+"\n", base64.StdEncoding.EncodeToString(data[off:end]), rem)
	}
	return b.String()
}

func TestReadStream(t *testing.T) {
	data := bytes.Repeat([]byte("etcd-bytes-"), 100)
	tests := []struct {
		name    string
		in      string
		limit   int64
		want    []byte
		wantErr error
	}{
		{"chunks camelCase", stream(data, 64, "remainingBytes"), 1 << 20, data, nil},
		{"chunks snake_case", stream(data, 300, "remaining_bytes"), 1 << 20, data, nil},
		{"one chunk", stream(data, len(data), "remainingBytes"), 1 << 20, data, nil},
		{"ends early", strings.SplitAfterN(stream(data, 64, "remainingBytes"), "\n", 3)[0], 1 << 20, nil, ErrInvalid},
		{"empty", "", 1 << 20, nil, ErrInvalid},
		{"garbage", "not json", 1 << 20, nil, ErrInvalid},
		{"no result", `{"foo":1}`, 1 << 20, nil, ErrInvalid},
		{"over limit", stream(data, 64, "remainingBytes"), 100, nil, ErrInvalid},
		{"etcd error", `{"error":{"code":14,"message":"etcdserver: no leader"}}`, 1 << 20, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadStream(strings.NewReader(tt.in), tt.limit)
			if tt.want != nil {
				if err != nil || !bytes.Equal(got, tt.want) {
					t.Fatalf("ReadStream = %d bytes, %v; want %d bytes", len(got), err, len(tt.want))
				}
				return
			}
			if err == nil {
				t.Fatalf("ReadStream succeeded with %d bytes, want an error", len(got))
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		want    int64
		wantErr bool
	}{
		{"revision 42", etcdDB(t, 42, true), 42, false},
		{"empty key bucket", etcdDB(t, 0, true), 0, false},
		{"no key bucket", etcdDB(t, 0, false), 0, true},
		{"not a database", bytes.Repeat([]byte{7}, 8192), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Verify(tt.data, t.TempDir())
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("Verify = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

// TestTakeOverTLS streams a snapshot from a TLS gateway that requires the
// cluster's etcd client certificate, after the first control plane's etcd
// does not answer.
func TestTakeOverTLS(t *testing.T) {
	c := &api.KubernetesCluster{
		Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: "lab"},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", APIServerEndpoint: "127.0.0.1:6443",
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "cp1", AdvertiseAddress: "127.0.0.1"}, {NodeID: "cp2", AdvertiseAddress: "127.0.0.2"}},
		},
	}
	c.Default()
	sec, err := pki.IssueClusterSecrets(c, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	db := etcdDB(t, 9, true)
	var calls []string
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("SKIP: cannot listen on 127.0.0.2: %v", err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.Path+" "+r.TLS.PeerCertificates[0].Subject.CommonName)
		if r.Method != http.MethodPost || r.URL.Path != "/v3/maintenance/snapshot" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, stream(db, 4096, "remainingBytes"))
	}))
	srv.Listener = ln
	pair, err := tls.X509KeyPair(sec.ControlPlanes["cp2"].EtcdServer.CertPEM, sec.ControlPlanes["cp2"].EtcdServer.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(sec.EtcdCA.CertPEM)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "https://" + dead.Addr().String()
	dead.Close()

	tk := &Taker{TempDir: t.TempDir(), Endpoint: func(addr string) string {
		if addr == "127.0.0.2" {
			return srv.URL
		}
		return deadURL
	}}
	snap, err := tk.Take(context.Background(), c, sec)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(db)
	if snap.Member != "cp2" || snap.Revision != 9 || snap.SHA256 != hex.EncodeToString(sum[:]) || !bytes.Equal(snap.Data, db) {
		t.Fatalf("snapshot from %s revision %d sha %s (%d bytes)", snap.Member, snap.Revision, snap.SHA256, len(snap.Data))
	}
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "POST /v3/maintenance/snapshot ") {
		t.Fatalf("gateway calls %v", calls)
	}

	tk.Endpoint = func(string) string { return deadURL }
	if _, err := tk.Take(context.Background(), c, sec); !errors.Is(err, ErrNoEtcd) {
		t.Fatalf("Take with no etcd answering = %v, want ErrNoEtcd", err)
	}
}
