package render

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// TestScaleOutChangesOnlyWhatThePlanSays renders a cluster, adds one control
// plane and one worker with Ensure on the same secrets in between (as the
// orchestrator does), renders again with EtcdClusterExists, and checks which
// units and tasks of the existing members change. kube-apiserver, etcd, the
// controller-manager, the scheduler and kubelet change nowhere: the API server
// talks to its local etcd member and its certificate names only its own
// control plane, and a bridge-mode pod range depends on the node's own address.
func TestScaleOutChangesOnlyWhatThePlanSays(t *testing.T) {
	tests := []struct {
		cluster string
		want    []string
		reloads []string
	}{
		// pkg/plan scale-out: keepalived reloads the new unicast peers, no restart.
		{"lab", nil, []string{"node-105/kcore-keepalived", "node-107/kcore-keepalived"}},
		{"lab-ha3", nil, []string{"node-105/kcore-keepalived", "node-107/kcore-keepalived", "node-109/kcore-keepalived"}},
		// Bridge mode: every member re-runs its routes task for the new /24s.
		{"bridge", []string{"node-103/kcore-bridge-routes", "node-105/kcore-bridge-routes", "node-107/kcore-bridge-routes"}, nil},
		// A one-node cluster grows past one member: CoreDNS and Cilium's
		// operator go to 2 replicas.
		{"single", []string{"node-105/kcore-kubernetes-addons", "node-105/kcore-kubernetes-cilium"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.cluster, func(t *testing.T) {
			c := loadCluster(t, tt.cluster)
			s := issueReal(t, c)
			facts := testFacts()
			before, err := Render(c, s, facts, Options{})
			if err != nil {
				t.Fatal(err)
			}
			added := map[string]bool{"node-111": true, "node-104": true}
			c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes, api.ClusterNode{NodeID: "node-111", AdvertiseAddress: "192.168.40.111", Iface: "enp6s0"})
			c.Spec.WorkerNodes = append(c.Spec.WorkerNodes, api.ClusterNode{NodeID: "node-104", AdvertiseAddress: "192.168.40.104", Iface: "enp6s0"})
			c.Default()
			reissued, err := s.Ensure(c, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range reissued {
				if parts := strings.Split(name, "/"); len(parts) < 2 || !added[parts[1]] {
					t.Errorf("Ensure reissued %s, which belongs to no added node", name)
				}
			}
			after, err := Render(c, s, facts, Options{EtcdClusterExists: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range changedHashes(before, after) {
				if !added[strings.SplitN(k, "/", 2)[0]] {
					got = append(got, k)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("changed on existing members:\n got %v\nwant %v", got, tt.want)
			}
			if got := changedReloads(before, after); !slices.Equal(got, tt.reloads) {
				t.Fatalf("reloaded on existing members:\n got %v\nwant %v", got, tt.reloads)
			}
		})
	}
}

// TestAPIServerUsesLocalEtcd checks that kube-apiserver names only the local
// etcd member, and that the member serves it: etcd listens on 127.0.0.1 and
// its server certificate names 127.0.0.1.
func TestAPIServerUsesLocalEtcd(t *testing.T) {
	c := loadCluster(t, "lab-ha3")
	s := issueReal(t, c)
	states, err := Render(c, s, testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Spec.ControlPlaneNodes {
		t.Run(n.NodeID, func(t *testing.T) {
			apiArgv := unitByName(states[n.NodeID], UnitAPIServer).Argv
			if !slices.Contains(apiArgv, "--etcd-servers=https://127.0.0.1:2379") {
				t.Errorf("kube-apiserver argv: %v", apiArgv)
			}
			etcd := strings.Join(unitByName(states[n.NodeID], UnitEtcd).Argv, " ")
			if !strings.Contains(etcd, "--listen-client-urls=https://"+n.AdvertiseAddress+":2379,https://127.0.0.1:2379") {
				t.Errorf("etcd does not listen on 127.0.0.1: %s", etcd)
			}
			cert, err := pki.ParseCert(s.ControlPlanes[n.NodeID].EtcdServer.CertPEM)
			if err != nil {
				t.Fatal(err)
			}
			if err := cert.VerifyHostname("127.0.0.1"); err != nil {
				t.Errorf("etcd server certificate: %v", err)
			}
		})
	}
}

// TestBridgePodRangesMustDiffer rejects members whose addresses map to the
// same pod /24.
func TestBridgePodRangesMustDiffer(t *testing.T) {
	c := loadCluster(t, "bridge")
	c.Spec.WorkerNodes = append(c.Spec.WorkerNodes, api.ClusterNode{NodeID: "node-203", AdvertiseAddress: "192.168.41.103"})
	if _, err := Render(c, fakeSecrets(c), testFacts(), Options{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("colliding pod ranges: %v, want ErrInvalid", err)
	}
}
