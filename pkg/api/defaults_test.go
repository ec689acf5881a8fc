package api

import (
	"reflect"
	"testing"
)

func baseCluster() *KubernetesCluster {
	return &KubernetesCluster{
		Kind:     "kubernetes-cluster",
		Metadata: ObjectMeta{Name: "lab"},
		Spec: ClusterSpec{
			ClusterCIDR:       "10.244.0.0/16",
			ServiceCIDR:       "10.96.0.0/12",
			APIServerEndpoint: "192.168.40.1:6443",
			ControlPlaneNodes: []ClusterNode{{NodeID: "node-1", AdvertiseAddress: "192.168.40.1"}},
			WorkerNodes:       []ClusterNode{{NodeID: "node-2", AdvertiseAddress: "192.168.40.2"}},
		},
	}
}

func TestClusterDefaults(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*KubernetesCluster)
		check  func(*KubernetesCluster) bool
	}{
		{"apiVersion and canonical kind", nil, func(c *KubernetesCluster) bool {
			return c.APIVersion == APIVersion && c.Kind == KindKubernetesCluster
		}},
		{"empty cni is cilium", nil, func(c *KubernetesCluster) bool { return c.Spec.CNI == CNICilium }},
		{"cni bridge kept on 6443", func(c *KubernetesCluster) { c.Spec.CNI = CNIBridge },
			func(c *KubernetesCluster) bool { return c.Spec.CNI == CNIBridge }},
		{"API port other than 6443 is bridge", func(c *KubernetesCluster) { c.Spec.APIServerEndpoint = "192.168.40.1:7443" },
			func(c *KubernetesCluster) bool { return c.Spec.CNI == CNIBridge }},
		{"API port other than 6443 overrides cilium", func(c *KubernetesCluster) {
			c.Spec.APIServerEndpoint = "192.168.40.1:7443"
			c.Spec.CNI = CNICilium
		}, func(c *KubernetesCluster) bool { return c.Spec.CNI == CNIBridge && c.Spec.Cilium.Mode == "" }},
		{"clusterDns 10.96.0.10", nil, func(c *KubernetesCluster) bool { return c.Spec.ClusterDNS == "10.96.0.10" }},
		{"clusterDns kept", func(c *KubernetesCluster) { c.Spec.ClusterDNS = "10.96.0.53" },
			func(c *KubernetesCluster) bool { return c.Spec.ClusterDNS == "10.96.0.53" }},
		{"iface enp6s0 on every node", nil, func(c *KubernetesCluster) bool {
			return c.Spec.ControlPlaneNodes[0].Iface == "enp6s0" && c.Spec.WorkerNodes[0].Iface == "enp6s0"
		}},
		{"iface kept", func(c *KubernetesCluster) { c.Spec.WorkerNodes[0].Iface = "eth1" },
			func(c *KubernetesCluster) bool { return c.Spec.WorkerNodes[0].Iface == "eth1" }},
		{"cilium defaults", nil, func(c *KubernetesCluster) bool {
			ci := c.Spec.Cilium
			return ci.Mode == "native-routing" && ci.MTU == 1500 && ci.Tunnel == "disabled" && ci.AutoDirectNodeRoutes != nil && *ci.AutoDirectNodeRoutes
		}},
		{"autoDirectNodeRoutes false kept", func(c *KubernetesCluster) { c.Spec.Cilium.AutoDirectNodeRoutes = ptr(false) },
			func(c *KubernetesCluster) bool { return !*c.Spec.Cilium.AutoDirectNodeRoutes }},
		{"HA health check on by default", func(c *KubernetesCluster) { c.Spec.HighAvailability.Enabled = true },
			func(c *KubernetesCluster) bool {
				return c.Spec.HighAvailability.HealthCheck != nil && c.Spec.HighAvailability.HealthCheckEnabled()
			}},
		{"provisioner untouched when off", nil, func(c *KubernetesCluster) bool {
			return reflect.DeepEqual(c.Spec.LocalProvisioner, LocalProvisionerSpec{})
		}},
		{"shared volume defaults", func(c *KubernetesCluster) {
			c.Spec.LocalProvisioner = LocalProvisionerSpec{Enabled: true, Volumes: []VolumeSpec{{Name: "data", NodeID: "node-2", StorageClass: "lvm", SizeBytes: 1}}}
		}, func(c *KubernetesCluster) bool {
			l := c.Spec.LocalProvisioner
			v := l.Volumes[0]
			return l.StorageClassName == "local-path" && l.Mode == "shared" && v.FSType == "ext4" && v.Role == "filesystem" && v.MountPath == "/mnt/kcore/lab/data"
		}},
		{"explicit volume fields kept", func(c *KubernetesCluster) {
			c.Spec.LocalProvisioner = LocalProvisionerSpec{Enabled: true, StorageClassName: "fast", Volumes: []VolumeSpec{{Name: "data", FSType: "xfs", MountPath: "/srv/data"}}}
		}, func(c *KubernetesCluster) bool {
			l := c.Spec.LocalProvisioner
			return l.StorageClassName == "fast" && l.Volumes[0].FSType == "xfs" && l.Volumes[0].MountPath == "/srv/data"
		}},
		{"lvm mode: role pool and no mount path", func(c *KubernetesCluster) {
			c.Spec.LocalProvisioner = LocalProvisionerSpec{Enabled: true, Mode: "lvm", Volumes: []VolumeSpec{{Name: "kdata"}}}
		}, func(c *KubernetesCluster) bool {
			v := c.Spec.LocalProvisioner.Volumes[0]
			return v.Role == "pool" && v.MountPath == "" && v.FSType == "ext4"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseCluster()
			if tt.mutate != nil {
				tt.mutate(c)
			}
			c.Default()
			if !tt.check(c) {
				t.Errorf("after Default: %+v", c.Spec)
			}
			again := *c
			again.Default()
			if !reflect.DeepEqual(&again, c) {
				t.Errorf("Default is not idempotent")
			}
		})
	}
}

func TestUpdateDefaults(t *testing.T) {
	u := &ClusterUpdate{Kind: "cluster_update"}
	u.Default()
	s := u.Spec
	if u.Kind != KindClusterUpdate || u.APIVersion != APIVersion || s.Strategy != "one-at-a-time" || s.BatchSize != 1 ||
		s.MaxUnavailable != 1 || s.Activation != "auto" || s.Approval != "manual" || s.UpdateKind != "kcore" {
		t.Errorf("defaults = %+v", u)
	}
	kept := &ClusterUpdate{Spec: UpdateSpec{Strategy: "batched", BatchSize: 3, MaxUnavailable: 2, Activation: "reboot", Approval: "auto", UpdateKind: "os"}}
	want := kept.Spec
	kept.Default()
	if !reflect.DeepEqual(kept.Spec, want) {
		t.Errorf("set fields changed: %+v", kept.Spec)
	}
}

func TestNames(t *testing.T) {
	if got := VolumeName("lab", "node-1", "data"); got != "k8s-lab-node-1-data" {
		t.Errorf("VolumeName = %q", got)
	}
	if got := DefaultMountPath("lab", "data"); got != "/mnt/kcore/lab/data" {
		t.Errorf("DefaultMountPath = %q", got)
	}
	for in, want := range map[string]string{
		"KubernetesCluster": KindKubernetesCluster, "kubernetes-cluster": KindKubernetesCluster, "kubernetes_cluster": KindKubernetesCluster,
		"ClusterUpdate": KindClusterUpdate, "cluster-update": KindClusterUpdate, "cluster_update": KindClusterUpdate,
		"Node": KindNode, "kubernetescluster": "", "": "",
	} {
		if got := CanonicalKind(in); got != want {
			t.Errorf("CanonicalKind(%q) = %q, want %q", in, got, want)
		}
	}
	for s, want := range map[string]bool{"lab": true, "node-105": true, "a": true, "Lab": false, "-a": false, "a-": false, "a_b": false, "": false,
		"a23456789012345678901234567890123456789012345678901234567890123": true, "a234567890123456789012345678901234567890123456789012345678901234": false} {
		if IsDNSLabel(s) != want {
			t.Errorf("IsDNSLabel(%q) = %v", s, !want)
		}
	}
	for s, want := range map[string]bool{"enp6s0": true, "br0.40": true, "eth0@x": true, "": false, ".": false, "..": false,
		"a/b": false, "enp6s0:1": false, "br 0": false, "abcdefghijklmno": true, "abcdefghijklmnop": false} {
		if IsInterfaceName(s) != want {
			t.Errorf("IsInterfaceName(%q) = %v", s, !want)
		}
	}
}
