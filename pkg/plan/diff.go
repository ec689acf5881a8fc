package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render/kubeflags"
)

// change is a FieldChange with what the effect table needs to know about it.
type change struct {
	FieldChange
	// key is Path with list indexes removed, e.g. spec.localProvisioner.volumes[].sizeBytes.
	key string
	// node is the node id of a node or volume entry.
	node string
	// volume is the volume name of a volume entry.
	volume string
	// oldSize and newSize are a volume's sizes in bytes.
	oldSize, newSize int64
}

// diffClusters lists every field that differs between two prepared clusters.
// Node and volume entries are matched by node id (and volume name), not by
// position, so reordering a list is not a change.
func diffClusters(old, cur *api.KubernetesCluster) []change {
	var out []change
	add := func(path, key, o, n string) {
		if o != n {
			out = append(out, change{FieldChange: FieldChange{Path: path, Old: o, New: n}, key: key})
		}
	}
	for _, k := range unionKeys(old.Metadata.Labels, cur.Metadata.Labels) {
		add("metadata.labels."+k, "metadata.labels", old.Metadata.Labels[k], cur.Metadata.Labels[k])
	}
	o, n := old.Spec, cur.Spec
	for _, f := range scalarFields() {
		add(f.path, f.path, f.get(&o), f.get(&n))
	}
	for _, comp := range kubeflags.Components() {
		base := "spec." + comp + ".extraArgs"
		om, nm := o.ExtraArgs(comp), n.ExtraArgs(comp)
		for _, k := range unionKeys(om, nm) {
			add(base+"."+k, base, om[k], nm[k])
		}
	}
	out = append(out, diffNodes("spec.controlPlaneNodes", o.ControlPlaneNodes, n.ControlPlaneNodes)...)
	out = append(out, diffNodes("spec.workerNodes", o.WorkerNodes, n.WorkerNodes)...)
	out = append(out, diffMirrors(o.RegistryMirrors, n.RegistryMirrors)...)
	return append(out, diffVolumes(o.LocalProvisioner.Volumes, n.LocalProvisioner.Volumes)...)
}

// scalarField is one single-valued spec field and how to read it as text.
type scalarField struct {
	path string
	get  func(*api.ClusterSpec) string
}

// scalarFields are the spec's single-valued fields in manifest order.
func scalarFields() []scalarField {
	return []scalarField{
		{"spec.clusterCidr", func(s *api.ClusterSpec) string { return s.ClusterCIDR }},
		{"spec.serviceCidr", func(s *api.ClusterSpec) string { return s.ServiceCIDR }},
		{"spec.clusterDns", func(s *api.ClusterSpec) string { return s.ClusterDNS }},
		{"spec.apiServerEndpoint", func(s *api.ClusterSpec) string { return s.APIServerEndpoint }},
		{"spec.cni", func(s *api.ClusterSpec) string { return s.CNI }},
		{"spec.cilium.mode", func(s *api.ClusterSpec) string { return s.Cilium.Mode }},
		{"spec.cilium.mtu", func(s *api.ClusterSpec) string { return intString(s.Cilium.MTU) }},
		{"spec.cilium.tunnel", func(s *api.ClusterSpec) string { return s.Cilium.Tunnel }},
		{"spec.cilium.autoDirectNodeRoutes", func(s *api.ClusterSpec) string { return boolPtrString(s.Cilium.AutoDirectNodeRoutes) }},
		{"spec.cilium.loadBalancerIpPools", func(s *api.ClusterSpec) string { return strings.Join(s.Cilium.LoadBalancerIPPools, ", ") }},
		{"spec.highAvailability.enabled", func(s *api.ClusterSpec) string { return strconv.FormatBool(s.HighAvailability.Enabled) }},
		{"spec.highAvailability.vipAddress", func(s *api.ClusterSpec) string { return s.HighAvailability.VIPAddress }},
		{"spec.highAvailability.vipInterface", func(s *api.ClusterSpec) string { return s.HighAvailability.VIPInterface }},
		{"spec.highAvailability.healthCheck", func(s *api.ClusterSpec) string { return boolPtrString(s.HighAvailability.HealthCheck) }},
		{"spec.scheduleOnControlPlane", func(s *api.ClusterSpec) string { return strconv.FormatBool(s.ScheduleOnControlPlane) }},
		{"spec.localProvisioner.enabled", func(s *api.ClusterSpec) string { return strconv.FormatBool(s.LocalProvisioner.Enabled) }},
		{"spec.localProvisioner.storageClassName", func(s *api.ClusterSpec) string { return s.LocalProvisioner.StorageClassName }},
		{"spec.localProvisioner.mode", func(s *api.ClusterSpec) string { return s.LocalProvisioner.Mode }},
		{"spec.caGeneration", func(s *api.ClusterSpec) string { return intString(s.CAGeneration) }},
		{"spec.initialCluster", func(s *api.ClusterSpec) string { return s.InitialCluster }},
		{"spec.etcdBackup.interval", func(s *api.ClusterSpec) string {
			return backupField(s, func(b *api.EtcdBackupSpec) string { return b.Interval })
		}},
		{"spec.etcdBackup.keep", func(s *api.ClusterSpec) string {
			return backupField(s, func(b *api.EtcdBackupSpec) string { return intString(b.Keep) })
		}},
		{"spec.etcdBackup.maxAge", func(s *api.ClusterSpec) string {
			return backupField(s, func(b *api.EtcdBackupSpec) string { return b.MaxAge })
		}},
		{"spec.etcdBackup.target", func(s *api.ClusterSpec) string {
			return backupField(s, func(b *api.EtcdBackupSpec) string { return b.Target })
		}},
		{"spec.etcdBackup.nodePath", func(s *api.ClusterSpec) string {
			return backupField(s, func(b *api.EtcdBackupSpec) string { return b.NodePath })
		}},
	}
}

// backupField is a field of spec.etcdBackup, "" when there is none.
func backupField(s *api.ClusterSpec, get func(*api.EtcdBackupSpec) string) string {
	if s.EtcdBackup == nil {
		return ""
	}
	return get(s.EtcdBackup)
}

func diffNodes(list string, old, cur []api.ClusterNode) []change {
	var out []change
	for i, n := range cur {
		path := fmt.Sprintf("%s[%d]", list, i)
		j := slices.IndexFunc(old, func(o api.ClusterNode) bool { return o.NodeID == n.NodeID })
		if j < 0 {
			out = append(out, change{FieldChange: FieldChange{Path: path, New: nodeString(n)}, key: list + "[]", node: n.NodeID})
			continue
		}
		o := old[j]
		for _, f := range []struct{ name, o, n string }{
			{"advertiseAddress", o.AdvertiseAddress, n.AdvertiseAddress},
			{"iface", o.Iface, n.Iface},
		} {
			if f.o != f.n {
				out = append(out, change{FieldChange: FieldChange{Path: path + "." + f.name, Old: f.o, New: f.n}, key: list + "[]." + f.name, node: n.NodeID})
			}
		}
	}
	for j, o := range old {
		if !slices.ContainsFunc(cur, func(n api.ClusterNode) bool { return n.NodeID == o.NodeID }) {
			out = append(out, change{FieldChange: FieldChange{Path: fmt.Sprintf("%s[%d]", list, j), Old: nodeString(o)}, key: list + "[]", node: o.NodeID})
		}
	}
	return out
}

func diffVolumes(old, cur []api.VolumeSpec) []change {
	const list = "spec.localProvisioner.volumes"
	same := func(a, b api.VolumeSpec) bool { return a.NodeID == b.NodeID && a.Name == b.Name }
	var out []change
	for i, v := range cur {
		path := fmt.Sprintf("%s[%d]", list, i)
		j := slices.IndexFunc(old, func(o api.VolumeSpec) bool { return same(o, v) })
		if j < 0 {
			out = append(out, change{FieldChange: FieldChange{Path: path, New: volumeString(v)}, key: list + "[]", node: v.NodeID, volume: v.Name, newSize: v.SizeBytes})
			continue
		}
		o := old[j]
		for _, f := range []struct{ name, o, n string }{
			{"storageClass", o.StorageClass, v.StorageClass},
			{"sizeBytes", strconv.FormatInt(o.SizeBytes, 10), strconv.FormatInt(v.SizeBytes, 10)},
			{"fsType", o.FSType, v.FSType},
			{"role", o.Role, v.Role},
			{"volumeGroup", o.VolumeGroup, v.VolumeGroup},
			{"disk", o.Disk, v.Disk},
			{"mountPath", o.MountPath, v.MountPath},
		} {
			if f.o != f.n {
				out = append(out, change{
					FieldChange: FieldChange{Path: path + "." + f.name, Old: f.o, New: f.n},
					key:         list + "[]." + f.name, node: v.NodeID, volume: v.Name,
					oldSize: o.SizeBytes, newSize: v.SizeBytes,
				})
			}
		}
	}
	for j, o := range old {
		if !slices.ContainsFunc(cur, func(v api.VolumeSpec) bool { return same(o, v) }) {
			out = append(out, change{FieldChange: FieldChange{Path: fmt.Sprintf("%s[%d]", list, j), Old: volumeString(o)}, key: list + "[]", node: o.NodeID, volume: o.Name, oldSize: o.SizeBytes})
		}
	}
	return out
}

// diffMirrors matches registry mirror entries by registry: an entry whose
// endpoints (in order) or CA bundle differ is one change.
func diffMirrors(old, cur []api.RegistryMirror) []change {
	const list = "spec.registryMirrors"
	var out []change
	for i, m := range cur {
		j := slices.IndexFunc(old, func(o api.RegistryMirror) bool { return o.Registry == m.Registry })
		switch {
		case j < 0:
			out = append(out, change{FieldChange: FieldChange{Path: fmt.Sprintf("%s[%d]", list, i), New: mirrorString(m)}, key: list + "[]"})
		case mirrorString(old[j]) != mirrorString(m):
			out = append(out, change{FieldChange: FieldChange{Path: fmt.Sprintf("%s[%d]", list, i), Old: mirrorString(old[j]), New: mirrorString(m)}, key: list + "[]"})
		}
	}
	for j, o := range old {
		if !slices.ContainsFunc(cur, func(m api.RegistryMirror) bool { return m.Registry == o.Registry }) {
			out = append(out, change{FieldChange: FieldChange{Path: fmt.Sprintf("%s[%d]", list, j), Old: mirrorString(o)}, key: list + "[]"})
		}
	}
	return out
}

// mirrorString shows a mirror entry; a CA bundle by the start of its sha256.
func mirrorString(m api.RegistryMirror) string {
	s := m.Registry + " via " + strings.Join(m.Endpoints, ", ")
	if m.CAPEM != "" {
		sum := sha256.Sum256([]byte(m.CAPEM))
		s += " (caPem sha256 " + hex.EncodeToString(sum[:])[:12] + ")"
	}
	return s
}

func nodeString(n api.ClusterNode) string {
	return fmt.Sprintf("%s %s %s", n.NodeID, n.AdvertiseAddress, n.Iface)
}

func volumeString(v api.VolumeSpec) string {
	if v.StorageClass == api.StorageClassDisk {
		return fmt.Sprintf("%s on %s: disk %s %s", v.Name, v.NodeID, v.Disk, v.FSType)
	}
	s := fmt.Sprintf("%s on %s: %s %s", v.Name, v.NodeID, v.StorageClass, humanBytes(v.SizeBytes))
	if v.VolumeGroup != "" {
		s += " in " + v.VolumeGroup
	}
	return s + " " + v.FSType
}

func intString(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func boolPtrString(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

func unionKeys(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
