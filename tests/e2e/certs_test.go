package e2e

import (
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/pki"
)

// The certificate rotation scenario's bounds.
const (
	// rotationLeafValidity is the lab's --leaf-validity: the shortest
	// allowed, so leaves renew every two thirds of it.
	rotationLeafValidity = pki.MinLeafValidity
	// rotationWait bounds each wait for a renewal: two thirds of the
	// lifetime, plus a minute for the controllers' 10 s health pass and
	// the agents' apply.
	rotationWait = rotationLeafValidity/pki.RenewDen*pki.RenewNum + time.Minute
	// rotationProbe is how often /readyz is asked through the VIP, and
	// rotationGap the longest run of failures allowed.
	rotationProbe = 100 * time.Millisecond
	rotationGap   = time.Second
	// rotationSettle bounds the wait for the cluster to be ready again
	// after a renewal: a few of the lab's 10 s health passes.
	rotationSettle = time.Minute
	// handshakeTimeout bounds one TLS handshake reading the serving
	// certificate.
	handshakeTimeout = 2 * time.Second
)

// TestCertRotation runs the lab with the shortest leaves pki allows. While
// /readyz is probed through the VIP every 100 ms, it waits for the API server's
// serving certificate (read off the TLS handshake on lab-n1) to be
// renewed: no probe failure lasts longer than 1 s, the kubelet client
// certificate on disk is renewed too, not one unit on any node was
// restarted (the same pid in each agent's supervisor state before and
// after), and one kept-alive connection with kctl's credentials to a
// controller replica serves every request while the replica renews its
// own certificate. Then the lab is powered off until every certificate
// those renewals issued has expired, and powered on: ready again with no
// other step (testExpiredWhileOff). The certificates issued at power-on
// renew once more under the same probe and checks: two renewals under the
// probe in all.
func TestCertRotation(t *testing.T) {
	start := time.Now()
	l := startLab(t, true, "LAB_LEAF_VALIDITY="+rotationLeafValidity.String(), "LAB_WORKLOAD_CHECK=0")
	eventually(t, "cluster healthy", 3*time.Minute, l.healthy)
	ctlAddr := net.JoinHostPort(labHost, controllerPorts()[0])
	ctlFirst, err := peerCert(l, ctlAddr)
	if err != nil {
		t.Fatal(err)
	}
	kept := l.startKeptConn(t, ctlAddr)
	l.renewedUnderProbe(t, start)
	requests, conns, errs := kept.end()
	ctlNow, err := peerCert(l, ctlAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kept connection to controller-0: %d requests on %d connection(s); its certificate %s -> %s", requests, conns, ctlFirst.SerialNumber, ctlNow.SerialNumber)
	if ctlNow.SerialNumber.Cmp(ctlFirst.SerialNumber) == 0 {
		t.Errorf("controller-0's own certificate was not renewed during the test (serial %s, valid until %s)", ctlNow.SerialNumber, ctlNow.NotAfter.Format(time.RFC3339))
	}
	if conns != 1 || len(errs) > 0 {
		t.Errorf("the kept-alive connection to controller-0 did not survive its renewal: %d connections, errors %v", conns, errs)
	}
	if t.Failed() {
		return
	}
	testExpiredWhileOff(t, l)
	if t.Failed() {
		return
	}
	l.renewedUnderProbe(t, start)
	t.Logf("TestCertRotation took %s", time.Since(start).Round(time.Second))
}

// renewedUnderProbe probes /readyz through the VIP every rotationProbe
// until kube-apiserver on lab-n1 presents a new serving certificate, then
// checks the probe's failure windows, that lab-n1's kubelet client
// certificate was renewed too, that no unit on any node restarted, and
// that the cluster is ready again.
func (l *lab) renewedUnderProbe(t *testing.T, start time.Time) {
	t.Helper()
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
	first, err := servingCert(l, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("serving certificate %s valid until %s", first.SerialNumber, first.NotAfter.Format(time.RFC3339))
	eventually(t, "a renewal of the API server's serving certificate", rotationWait, func() error {
		c, err := servingCert(l, host)
		if err != nil {
			return err
		}
		if c.SerialNumber.Cmp(first.SerialNumber) == 0 {
			return fmt.Errorf("still serving %s", c.SerialNumber)
		}
		t.Logf("renewed %s after the start: serial %s valid until %s", time.Since(start).Round(time.Second), c.SerialNumber, c.NotAfter.Format(time.RFC3339))
		return nil
	})
	windows, failed, total := p.stop()
	t.Logf("probe: %d of %d /readyz through the VIP failed; failure windows %v", failed, total, windows)
	for _, w := range windows {
		if w > rotationGap {
			t.Errorf("/readyz through the VIP failed for %s in a row, longer than %s", w, rotationGap)
		}
	}
	// The kubelet client certificate renews in the same publish; give the
	// agent a health pass to write it.
	eventually(t, "lab-n1's kubelet client certificate renewed", rotationSettle, func() error {
		if c, err := serialOfFile(clientCert); err != nil || c == firstClient {
			return fmt.Errorf("kubelet client certificate on lab-n1: serial %s, err %v", c, err)
		}
		return nil
	})
	for _, n := range labNodes() {
		s, err := l.units(n.name)
		if err != nil {
			t.Fatal(err)
		}
		for name, u := range s.Units {
			if before, ok := pids[n.name+"/"+name]; ok && before != u.PID {
				t.Errorf("%s on %s restarted during the renewal: pid %d -> %d (%s)", name, n.name, before, u.PID, u.State)
			}
		}
	}
	// The renewal's publish leaves the cluster updating until the
	// controllers' next health pass.
	if err := poll(rotationSettle, l.healthy); err != nil {
		t.Errorf("cluster after the renewal: %v", err)
	}
}

// servingCert is the certificate kube-apiserver on host presents, verified
// against the lab's cluster CA.
func servingCert(l *lab, host string) (*x509.Certificate, error) {
	return handshakeCert(filepath.Join(l.dir, "n1", "etc", "kubernetes", "pki", "ca.crt"), net.JoinHostPort(host, apiPort))
}

// serialOfFile is the serial number of the PEM certificate in file.
func serialOfFile(file string) (string, error) {
	c, err := certOfFile(file)
	if err != nil {
		return "", err
	}
	return c.SerialNumber.String(), nil
}
