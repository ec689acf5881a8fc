package plan

import (
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// TestReissuedCertificateNamesItsKey: pki issues every certificate with a
// new key, so a VIP change that reissues the API server certificate also
// rewrites its key on each control plane, and the plan names both files
// (as secrets) in the certificates step.
func TestReissuedCertificateNamesItsKey(t *testing.T) {
	next := with(labCluster(), func(c *api.KubernetesCluster) {
		c.Spec.HighAvailability.VIPAddress = "192.168.40.201"
		c.Spec.APIServerEndpoint = "192.168.40.201:6443"
	})
	p := Compute(Input{Desired: clusters(next), Stored: clusters(stored(labCluster(), api.PhaseReady)), Nodes: labNodes()})
	if p.Blocked() || len(p.Clusters) != 1 {
		t.Fatalf("plan: %+v", p)
	}
	for _, id := range []string{"node-105", "node-107"} {
		var cert, key *ItemChange
		for _, s := range p.Clusters[0].Steps {
			for i, it := range s.Changes {
				if s.Node != id || it.Kind != "file" {
					continue
				}
				switch it.Name {
				case "/etc/kubernetes/pki/apiserver.crt":
					cert = &s.Changes[i]
				case "/etc/kubernetes/pki/apiserver.key":
					key = &s.Changes[i]
				}
			}
		}
		if cert == nil {
			t.Fatalf("%s: the plan does not reissue apiserver.crt", id)
		}
		if key == nil || key.Change != "change" || !key.Secret {
			t.Errorf("%s: the plan reissues apiserver.crt but does not name its new key apiserver.key (secret): %+v", id, key)
		}
	}
}
