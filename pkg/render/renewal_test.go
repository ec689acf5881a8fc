package render

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// TestRenewalRestartsNoUnit renews every leaf of a cluster at two thirds of
// its lifetime (the time passed to Ensure is the clock), with real secrets:
// every component reloads its pairs from the files (etcd and kube-apiserver
// by themselves, kubelet its serving pair, and the kubeconfig users through
// client-go, their kubeconfigs naming the files), so no unit's input hash
// changes on any node while every leaf certificate file's content does.
func TestRenewalRestartsNoUnit(t *testing.T) {
	sawKubeProxy := false
	for _, name := range []string{"lab", "lab-ha3", "bridge", "single"} {
		t.Run(name, func(t *testing.T) {
			c := loadCluster(t, name)
			s := issueReal(t, c)
			before, err := Render(c, s, testFacts(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			cp := c.Spec.ControlPlaneNodes[0].NodeID
			cert, err := pki.ParseCert(s.ControlPlanes[cp].EtcdServer.CertPEM)
			if err != nil {
				t.Fatal(err)
			}
			reissued, err := s.Ensure(c, pki.RenewAt(cert).Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(reissued, "controlPlanes/"+cp+"/scheduler") || !slices.Contains(reissued, "nodes/"+cp+"/kubeletClient") {
				t.Fatalf("Ensure reissued %v: want every leaf", reissued)
			}
			after, err := Render(c, s, testFacts(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			units := map[string]bool{}
			for id, ns := range after {
				for _, u := range ns.Units {
					units[id+"/"+u.Name] = true
					if u.Name == UnitKubeProxy {
						sawKubeProxy = true
					}
				}
			}
			for _, k := range changedHashes(before, after) {
				if units[k] {
					t.Errorf("%s restarts on a renewal: it reloads its certificates", k)
				}
			}
			for id, ns := range after {
				old := files(before[id])
				for _, f := range ns.Files {
					if !strings.HasSuffix(f.Path, ".crt") || strings.Contains(f.Path, "ca.crt") {
						continue
					}
					if old[f.Path] == f.Content {
						t.Errorf("%s: %s kept its content through a renewal", id, f.Path)
					}
				}
				for _, kc := range []string{KubeletKubeconfigPath, ControllerManagerKubeconfigPath, SchedulerKubeconfigPath, KubeProxyKubeconfigPath} {
					if f, ok := fileOf(ns, kc); ok && old[kc] != f.Content {
						t.Errorf("%s: %s changed on a renewal: it must name its files", id, kc)
					}
				}
			}
		})
	}
	if !sawKubeProxy {
		t.Error("no cluster rendered kube-proxy: its kubeconfig went untested")
	}
}

// TestIdentityChangeRestartsReloadingUnit gives the reloaded pairs a new
// name (an extra SAN on kubelet's serving certificate, a new organization
// on the controller-manager's and a node's client certificates): the units
// that read them restart, and only those.
func TestIdentityChangeRestartsReloadingUnit(t *testing.T) {
	c := loadCluster(t, "lab")
	s := issueReal(t, c)
	before, err := Render(c, s, testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.LoadCA(s.CA)
	if err != nil {
		t.Fatal(err)
	}
	reissue := func(kp *pki.KeyPair, change func(*pki.CertRequest)) {
		t.Helper()
		cert, err := pki.ParseCert(kp.CertPEM)
		if err != nil {
			t.Fatal(err)
		}
		req := pki.RenewalRequest(cert, time.Hour)
		change(&req)
		if *kp, err = ca.Issue(req, cert.NotBefore); err != nil {
			t.Fatal(err)
		}
	}
	reissue(&s.Nodes["node-103"].KubeletServing, func(r *pki.CertRequest) {
		r.IPs = append(slices.Clone(r.IPs), net.ParseIP("192.0.2.9"))
	})
	reissue(&s.Nodes["node-107"].KubeletClient, func(r *pki.CertRequest) { r.Organization = []string{"example:other"} })
	reissue(&s.ControlPlanes["node-105"].ControllerManager, func(r *pki.CertRequest) { r.Organization = []string{"example:other"} })
	reissue(&s.ControlPlanes["node-107"].Scheduler, func(r *pki.CertRequest) { r.CommonName = "example:scheduler" })
	after, err := Render(c, s, testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := changedHashes(before, after)
	want := []string{"node-103/kcore-kubelet", "node-105/kcore-kube-controller-manager", "node-107/kcore-kube-scheduler", "node-107/kcore-kubelet"}
	if !slices.Equal(got, want) {
		t.Errorf("changed %v, want %v", got, want)
	}
}

func files(ns *api.NodeState) map[string]string {
	out := map[string]string{}
	if ns == nil {
		return out
	}
	for _, f := range ns.Files {
		out[f.Path] = f.Content
	}
	return out
}

func fileOf(ns *api.NodeState, path string) (api.File, bool) {
	for _, f := range ns.Files {
		if f.Path == path {
			return f, true
		}
	}
	return api.File{}, false
}
