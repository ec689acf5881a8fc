package render

import (
	"slices"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/pki"
)

// TestRenewalRestartsOnlyWhatCannotReload renews every leaf of a cluster at
// two thirds of its lifetime, with real secrets: etcd and kube-apiserver
// reload their pairs from the files, so their units keep their input
// hashes; the units whose kubeconfigs embed their certificates change.
func TestRenewalRestartsOnlyWhatCannotReload(t *testing.T) {
	c := loadCluster(t, "lab")
	s := issueReal(t, c)
	before, err := Render(c, s, testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pki.ParseCert(s.ControlPlanes["node-105"].EtcdServer.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	reissued, err := s.Ensure(c, pki.RenewAt(cert).Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(reissued, "controlPlanes/node-105/etcdServer") || !slices.Contains(reissued, "controlPlanes/node-107/apiServer") {
		t.Fatalf("Ensure reissued %v: want every leaf", reissued)
	}
	after, err := Render(c, s, testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := changedHashes(before, after)
	t.Logf("changed: %v", got)
	for _, keep := range []string{"node-105/kcore-etcd", "node-107/kcore-etcd", "node-105/kcore-kube-apiserver", "node-107/kcore-kube-apiserver"} {
		if slices.Contains(got, keep) {
			t.Errorf("%s restarts on a renewal: it reloads its certificates itself", keep)
		}
	}
	for _, restart := range []string{"node-105/kcore-kubelet", "node-105/kcore-kube-scheduler", "node-105/kcore-kube-controller-manager"} {
		if !slices.Contains(got, restart) {
			t.Errorf("%s does not restart on a renewal: its kubeconfig embeds the certificate", restart)
		}
	}
}
