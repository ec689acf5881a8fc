package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/kctlconfig"
	"kcore.dev/kcore/pkg/pki"
)

// The power-cycle part of the certificate scenario's bounds.
const (
	// offPastExpiry is how long past the last certificate's expiry the lab
	// stays off.
	offPastExpiry = 15 * time.Second
	// powerOnReady bounds scripts/lab.sh start: the controllers, the
	// agents, the renewal of every expired certificate and the cluster
	// ready again.
	powerOnReady = 10 * time.Minute
	// keptConnEvery is how often the kept-alive controller connection is
	// used while the replicas renew their own certificates.
	keptConnEvery = time.Second
)

// labCerts are the certificates whose expiry the power-cycle waits out:
// the API server's serving pair, the kubelet's client pair and etcd's
// server pair on every node, and each controller replica's own.
func (l *lab) labCerts(t *testing.T) map[string]*x509.Certificate {
	t.Helper()
	out := map[string]*x509.Certificate{}
	for _, n := range labNodes() {
		dir := filepath.Join(l.dir, n.name, "etc", "kubernetes", "pki")
		for _, f := range []string{"apiserver.crt", "kubelet-client.crt", filepath.Join("etcd", "server.crt")} {
			c, err := certOfFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			out[n.name+"/"+f] = c
		}
	}
	for i, p := range controllerPorts() {
		c, err := peerCert(l, net.JoinHostPort(labHost, p))
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("controller-%d", i)] = c
	}
	return out
}

// testExpiredWhileOff powers the lab off (every process killed at once),
// keeps it off until every certificate above has expired, powers it on
// and wants the cluster ready with no other step: every certificate
// renewed and valid, /readyz through the VIP, every node Ready.
func testExpiredWhileOff(t *testing.T, l *lab) {
	before := l.labCerts(t)
	var last time.Time
	for _, c := range before {
		if c.NotAfter.After(last) {
			last = c.NotAfter
		}
	}
	if out, err := l.script(2*time.Minute, nil, "stop"); err != nil {
		t.Fatalf("scripts/lab.sh stop: %v\n%s", err, out)
	}
	off := time.Now()
	t.Logf("lab powered off; the last of %d certificates expires at %s", len(before), last.Format(time.RFC3339))
	<-time.After(time.Until(last.Add(offPastExpiry)))
	start := time.Now()
	if out, err := l.script(powerOnReady, []string{"KCORE_BIN_DIR=" + l.kBin}, "start"); err != nil {
		t.Fatalf("scripts/lab.sh start after %s off: %v\n%s", start.Sub(off).Round(time.Second), err, out)
	}
	t.Logf("ready %s after power-on, %s off, every certificate expired for at least %s",
		time.Since(start).Round(time.Second), start.Sub(off).Round(time.Second), offPastExpiry)
	eventually(t, "/readyz through the VIP after power-on", time.Minute, l.readyz)
	eventually(t, "every node Ready after power-on", 3*time.Minute, func() error {
		out, err := l.kubectl("get", "nodes", "-o", "json")
		if err != nil {
			return err
		}
		return allNodesReady(out, len(labNodes()))
	})
	now := time.Now()
	for name, c := range l.labCerts(t) {
		if old := before[name]; old != nil && old.SerialNumber.Cmp(c.SerialNumber) == 0 {
			t.Errorf("%s not renewed after power-on (serial %s expired %s)", name, c.SerialNumber, c.NotAfter.Format(time.RFC3339))
		} else if now.After(c.NotAfter) {
			t.Errorf("%s expired at %s", name, c.NotAfter.Format(time.RFC3339))
		}
	}
}

// keptConn uses one kept-alive connection to a controller replica with
// kctl's credentials (the lab's kctl.yaml) every keptConnEvery until stop:
// every request must succeed, on the same connection, while the replica's
// own certificate is renewed under it.
type keptConn struct {
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	requests int
	conns    int
	errs     []error
}

// startKeptConn starts using one connection to the replica at addr.
func (l *lab) startKeptConn(t *testing.T, addr string) *keptConn {
	t.Helper()
	cfg, err := kctlconfig.Load(filepath.Join(l.dir, "kctl.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := cfg.Current()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := x.Credentials()
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(creds.Cert, creds.Key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(creds.CA) {
		t.Fatal("no CA in the lab's kctl.yaml")
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool, Certificates: []tls.Certificate{pair}},
		MaxIdleConns:    1, IdleConnTimeout: time.Hour,
	}}
	k := &keptConn{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(k.done)
		tick := time.NewTicker(keptConnEvery)
		defer tick.Stop()
		for {
			k.use(hc, "https://"+addr+apiv1.PathHealth)
			select {
			case <-k.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return k
}

// use makes one request and records whether it needed a new connection.
func (k *keptConn) use(hc *http.Client, url string) {
	fresh := false
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { fresh = !i.Reused },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err == nil {
		var resp *http.Response
		if resp, err = hc.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("GET %s: %s", url, resp.Status)
			}
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.requests++
	if fresh {
		k.conns++
	}
	if err != nil && len(k.errs) < 10 {
		k.errs = append(k.errs, err)
	}
}

// end stops the requests and returns how many were made, on how many
// connections, and the first errors.
func (k *keptConn) end() (requests, conns int, errs []error) {
	close(k.stop)
	<-k.done
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.requests, k.conns, k.errs
}

// peerCert is the certificate a controller replica presents on a new
// handshake, verified against the controller CA.
func peerCert(l *lab, addr string) (*x509.Certificate, error) {
	return handshakeCert(filepath.Join(l.dir, "controller-ca.crt"), addr)
}

// handshakeCert is the certificate the server at addr presents on a new
// handshake without a client certificate, verified against the CA in
// caFile for addr's host.
func handshakeCert(caFile, addr string) (*x509.Certificate, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no CA certificate in %s", caFile)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: handshakeTimeout}, "tcp", addr,
		&tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool, ServerName: host})
	if err != nil {
		return nil, fmt.Errorf("handshake with %s: %w", addr, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// certOfFile is the PEM certificate in file.
func certOfFile(file string) (*x509.Certificate, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	c, err := pki.ParseCert(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}
