package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The certificate rotation scenario's bounds.
const (
	// rotationLeafValidity is the lab's --leaf-validity: the shortest
	// pki.MinLeafValidity allows, so leaves renew every 3m20s.
	rotationLeafValidity = "5m"
	// rotationRenewals is how many renewals of the API server's serving
	// certificate the scenario waits for.
	rotationRenewals = 2
	// rotationWait bounds that wait: two renewals at two thirds of 5m,
	// plus the controllers' 10 s health pass and the agents' apply.
	rotationWait = 9 * time.Minute
	// rotationProbe is how often /readyz is asked through the VIP, and
	// rotationGap the longest run of failures allowed.
	rotationProbe = 100 * time.Millisecond
	rotationGap   = time.Second
	// rotationSettle bounds the wait for the cluster to be ready again
	// after the last renewal: a few of the lab's 10 s health passes.
	rotationSettle = time.Minute
	// handshakeTimeout bounds one TLS handshake reading the serving
	// certificate.
	handshakeTimeout = 2 * time.Second
)

// TestCertRotation runs the lab with five-minute leaves and waits for the
// API server's serving certificate (read off the TLS handshake on lab-n1)
// to be renewed twice while /readyz is probed through the VIP every 100 ms:
// no probe failure lasts longer than 1 s, the kubelet client certificate on
// disk is renewed too, and not one unit on any node was restarted (the same
// pid in each agent's supervisor state before and after).
func TestCertRotation(t *testing.T) {
	start := time.Now()
	l := startLab(t, true, "LAB_LEAF_VALIDITY="+rotationLeafValidity, "LAB_WORKLOAD_CHECK=0")
	eventually(t, "cluster healthy", 3*time.Minute, l.healthy)
	pids := map[string]int{}
	for _, n := range labNodes() {
		s, err := l.units(n.name)
		if err != nil {
			t.Fatal(err)
		}
		for name, u := range s.Units {
			pids[n.name+"/"+name] = u.PID
		}
	}
	if len(pids) == 0 {
		t.Fatal("no supervised unit on any node")
	}
	clientCert := filepath.Join(l.dir, "n1", "etc", "kubernetes", "pki", "kubelet-client.crt")
	firstClient, err := serialOfFile(clientCert)
	if err != nil {
		t.Fatal(err)
	}
	p := l.startProbeAt(t, vip, rotationProbe)

	host := labNodes()[0].addr
	seen := map[string]time.Time{}
	first, err := servingCert(l, host)
	if err != nil {
		t.Fatal(err)
	}
	seen[first.SerialNumber.String()] = first.NotAfter
	t.Logf("serving certificate %s valid until %s", first.SerialNumber, first.NotAfter.Format(time.RFC3339))
	eventually(t, fmt.Sprintf("%d renewals of the API server's serving certificate", rotationRenewals), rotationWait, func() error {
		c, err := servingCert(l, host)
		if err != nil {
			return err
		}
		if _, ok := seen[c.SerialNumber.String()]; !ok {
			seen[c.SerialNumber.String()] = c.NotAfter
			t.Logf("renewed after %s: serial %s valid until %s", time.Since(start).Round(time.Second), c.SerialNumber, c.NotAfter.Format(time.RFC3339))
		}
		if len(seen) <= rotationRenewals {
			return fmt.Errorf("%d serving certificates seen", len(seen))
		}
		return nil
	})

	windows, failed, total := p.stop()
	t.Logf("probe: %d of %d /readyz through the VIP failed; failure windows %v", failed, total, windows)
	for _, w := range windows {
		if w > rotationGap {
			t.Errorf("/readyz through the VIP failed for %s in a row, longer than %s", w, rotationGap)
		}
	}
	if c, err := serialOfFile(clientCert); err != nil || c == firstClient {
		t.Errorf("kubelet client certificate on lab-n1 not renewed (serial %s, err %v)", c, err)
	}
	for _, n := range labNodes() {
		s, err := l.units(n.name)
		if err != nil {
			t.Fatal(err)
		}
		for name, u := range s.Units {
			if before, ok := pids[n.name+"/"+name]; ok && before != u.PID {
				t.Errorf("%s on %s restarted during the renewals: pid %d -> %d (%s)", name, n.name, before, u.PID, u.State)
			}
		}
	}
	// The last renewal's publish leaves the cluster updating until the
	// controllers' next health pass.
	if err := poll(rotationSettle, l.healthy); err != nil {
		t.Errorf("cluster after the renewals: %v", err)
	}
	t.Logf("TestCertRotation took %s", time.Since(start).Round(time.Second))
}

// servingCert is the certificate kube-apiserver on host presents, verified
// against the lab's cluster CA.
func servingCert(l *lab, host string) (*x509.Certificate, error) {
	ca, err := os.ReadFile(filepath.Join(l.dir, "n1", "etc", "kubernetes", "pki", "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no CA certificate in the lab's ca.crt")
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: handshakeTimeout}, "tcp", net.JoinHostPort(host, apiPort),
		&tls.Config{RootCAs: pool, ServerName: host})
	if err != nil {
		return nil, fmt.Errorf("handshake with %s: %w", host, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// serialOfFile is the serial number of the PEM certificate in file.
func serialOfFile(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return "", fmt.Errorf("parse %s: no PEM block", file)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", file, err)
	}
	return c.SerialNumber.String(), nil
}
