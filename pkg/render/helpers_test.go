package render

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// loadCluster reads testdata/clusters/<name>.yaml, defaults and validates it.
func loadCluster(t *testing.T, name string) *api.KubernetesCluster {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "clusters", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c api.KubernetesCluster
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c.Default()
	if errs := c.Validate().Errors(); len(errs) > 0 {
		t.Fatalf("%s is invalid: %v", name, errs)
	}
	return &c
}

// testFacts are the storage backends the test nodes report.
func testFacts() map[string]*api.Node {
	backend := func(id, class, name string) *api.Node {
		return &api.Node{Kind: api.KindNode, Metadata: api.ObjectMeta{Name: id}, Facts: api.NodeFacts{
			Storage: []api.StorageBackend{{Class: class, Name: name, SizeBytes: 1 << 40, FreeBytes: 1 << 39}},
		}}
	}
	n107 := backend("node-107", api.StorageClassLVM, "vg_kcore")
	n107.Facts.Disks = []api.Disk{{ID: "nvme-SAMSUNG_MZ_S1", Path: "/dev/nvme1n1", SizeBytes: 1 << 40, Probed: true}}
	return map[string]*api.Node{
		"node-103": backend("node-103", api.StorageClassLVM, "vg_data"),
		"node-105": backend("node-105", api.StorageClassLVM, "vg_kcore"),
		"node-107": n107,
		"node-109": backend("node-109", api.StorageClassZFS, "tank"),
	}
}

// fakePair is a recognisable stand-in for a key pair, so golden files hold
// no key material.
func fakePair(name string) pki.KeyPair {
	return pki.KeyPair{
		CertPEM: []byte("-----BEGIN CERTIFICATE-----\nFAKE " + name + "\n-----END CERTIFICATE-----\n"),
		KeyPEM:  []byte("-----BEGIN PRIVATE KEY-----\nFAKE " + name + "\n-----END PRIVATE KEY-----\n"),
	}
}

// fakeSecrets covers every member of c with fake key pairs.
func fakeSecrets(c *api.KubernetesCluster) *pki.ClusterSecrets {
	s := &pki.ClusterSecrets{
		CA:               fakePair("ca"),
		EtcdCA:           fakePair("etcd-ca"),
		FrontProxyCA:     fakePair("front-proxy-ca"),
		FrontProxyClient: fakePair("front-proxy-client"),
		ServiceAccount:   fakePair("sa"),
		ControlPlanes:    map[string]*pki.ControlPlaneSecrets{},
		Nodes:            map[string]*pki.NodeSecrets{},
	}
	for _, n := range c.Spec.ControlPlaneNodes {
		p := func(what string) pki.KeyPair { return fakePair(n.NodeID + " " + what) }
		s.ControlPlanes[n.NodeID] = &pki.ControlPlaneSecrets{
			EtcdServer: p("etcd-server"), EtcdPeer: p("etcd-peer"), APIServer: p("apiserver"),
			APIServerKubeletClient: p("apiserver-kubelet-client"), APIServerEtcdClient: p("apiserver-etcd-client"),
			ControllerManager: p("controller-manager"), Scheduler: p("scheduler"), Admin: p("admin"),
		}
	}
	for _, n := range c.Spec.Members() {
		ns := &pki.NodeSecrets{KubeletClient: fakePair(n.NodeID + " kubelet-client"), KubeletServing: fakePair(n.NodeID + " kubelet")}
		if c.Spec.CNI == api.CNIBridge {
			ns.KubeProxy = fakePair(n.NodeID + " kube-proxy")
		}
		s.Nodes[n.NodeID] = ns
	}
	return s
}

// renderCase renders a fixture with fake secrets and the test facts.
func renderCase(t *testing.T, name string, opts Options) (*api.KubernetesCluster, map[string]*api.NodeState) {
	t.Helper()
	c := loadCluster(t, name)
	out, err := Render(c, fakeSecrets(c), testFacts(), opts)
	if err != nil {
		t.Fatalf("render %s: %v", name, err)
	}
	return c, out
}

func unitByName(ns *api.NodeState, name string) *api.Unit {
	for i := range ns.Units {
		if ns.Units[i].Name == name {
			return &ns.Units[i]
		}
	}
	return nil
}

func taskByName(ns *api.NodeState, name string) *api.Task {
	for i := range ns.Tasks {
		if ns.Tasks[i].Name == name {
			return &ns.Tasks[i]
		}
	}
	return nil
}

func fileByPath(ns *api.NodeState, path string) *api.File {
	for i := range ns.Files {
		if ns.Files[i].Path == path {
			return &ns.Files[i]
		}
	}
	return nil
}
