package e2e

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// caRotationTimeout bounds kctl kubernetes rotate-ca --wait: three rolls,
// each a step per control plane (VIP hand-over, restarts, gates) and a
// kubelet batch, with the lab's 10 s health passes between them.
const caRotationTimeout = 15 * time.Minute

// testCARotation: kctl kubernetes rotate-ca rotates the running cluster's
// cluster, etcd and front-proxy CAs in its three rolls while /readyz is
// probed through the VIP by a client that trusts n1's ca.crt as it changes
// (as a pod trusting kube-root-ca.crt does): no failure window is longer
// than the VRRP bound. Afterwards every member's ca.crt, etcd/ca.crt and
// front-proxy-ca.crt hold one certificate of the new generation, each
// control plane's kube-apiserver serves a certificate the old CA does not
// verify, etcd has three started members, every node is Ready, the
// kubeconfig handed out before the rotation is refused and a new one works.
func testCARotation(t *testing.T, l *lab) {
	pki := func(n int, file string) string {
		return filepath.Join(l.dir, "n"+string(rune('0'+n)), "etc", "kubernetes", "pki", file)
	}
	oldCA, err := os.ReadFile(pki(1, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	oldPool := x509.NewCertPool()
	if !oldPool.AppendCertsFromPEM(oldCA) {
		t.Fatal("no CA certificate in n1's ca.crt")
	}
	handed := filepath.Join(l.dir, "kubeconfig-"+cluster)

	p := l.startProbe(t)
	start := time.Now()
	out, err := l.kctl(caRotationTimeout+time.Minute, "kubernetes", "rotate-ca", cluster, "--yes", "--wait", "--timeout", caRotationTimeout.String())
	windows, failed, total := p.stop()
	t.Logf("rotate-ca took %s; probe: %d of %d /readyz through the VIP failed; failure windows %v", time.Since(start).Round(time.Second), failed, total, windows)
	if err != nil {
		t.Fatalf("kctl kubernetes rotate-ca: %v\n%s", err, out)
	}
	for _, want := range []string{"CA rotation 0 → 1, trust phase", "CA rotation 0 → 1: trust phase", "CA rotation 0 → 1: reissue phase", `cluster "lab" is ready`} {
		if !strings.Contains(out, want) {
			t.Errorf("rotate-ca output lacks %q:\n%s", want, out)
		}
	}
	for _, w := range windows {
		if w > vrrpBound {
			t.Errorf("/readyz through the VIP failed for %s in a row, longer than the VRRP bound %s", w, vrrpBound)
		}
	}

	for i, n := range labNodes() {
		for _, file := range []string{"ca.crt", "etcd/ca.crt", "front-proxy-ca.crt"} {
			data, err := os.ReadFile(pki(i+1, file))
			if err != nil {
				t.Fatal(err)
			}
			if c := bytes.Count(data, []byte("BEGIN CERTIFICATE")); c != 1 || bytes.Equal(data, oldCA) {
				t.Errorf("%s %s: %d certificates, the old CA: %v; want the new CA alone", n.name, file, c, bytes.Equal(data, oldCA))
			}
		}
		cert, err := servingCert(l, n.addr)
		if err != nil {
			t.Errorf("%s: kube-apiserver under the new CA: %v", n.name, err)
			continue
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: oldPool}); err == nil {
			t.Errorf("%s: kube-apiserver still serves a certificate of the old CA", n.name)
		}
	}
	eventually(t, "three started etcd members", 30*time.Second, func() error { return l.etcdMembers(3) })
	eventually(t, "every node Ready", time.Minute, func() error {
		out, err := l.kubectl("get", "nodes", "-o", "json")
		if err != nil {
			return err
		}
		return allNodesReady(out, len(labNodes()))
	})
	if out, err := run(15*time.Second, nil, filepath.Join(l.k8sBin, "kubectl"), "--kubeconfig", handed, "--request-timeout=5s", "get", "nodes"); err == nil {
		t.Errorf("the kubeconfig handed out before the rotation still works:\n%s", out)
	}
	testKubeconfig(t, l)
	if err := l.healthy(); err != nil {
		t.Errorf("after the rotation: %v", err)
	}
}
