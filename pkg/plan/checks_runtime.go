package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// ContainerdFact is the key of the containerd version in a node's facts
// (api.NodeFacts.Versions), as the agent reports it.
const ContainerdFact = "containerd"

// RuntimePair is one row of the kubelet/containerd support table: kubelets
// from KubeletMin to KubeletMax (minor versions, inclusive; an empty
// KubeletMax has no upper bound) need containerd ContainerdMin or later.
type RuntimePair struct {
	KubeletMin, KubeletMax string
	ContainerdMin          string
	// Why is the upstream reason, shown in the blocking issue.
	Why string
}

// RuntimeSupport is the one table of supported kubelet and containerd
// pairs the plan checks every member against.
func RuntimeSupport() []RuntimePair {
	return []RuntimePair{
		{KubeletMin: "1.26", KubeletMax: "1.35", ContainerdMin: "1.6",
			Why: "kubelet 1.26 and later speak only the CRI v1 API, which containerd serves from 1.6"},
		{KubeletMin: "1.36", ContainerdMin: "2.0",
			Why: "Kubernetes 1.35 was the last release to support containerd 1.x"},
	}
}

// checkRuntime blocks every member whose kubelet, at the release the
// desired render runs it (the version of the layout's kubelet unit), needs a newer
// containerd than the node reports. A node that reports no containerd, or
// a render without a release, is not checked.
func (b *builder) checkRuntime(c *api.KubernetesCluster, l render.Layout, states map[string]*api.NodeState) {
	for i, m := range c.Spec.Members() {
		n, ns := b.env.nodes[m.NodeID], states[m.NodeID]
		if n == nil || ns == nil {
			continue
		}
		kubelet := ""
		for _, u := range ns.Units {
			if u.Name == l.UnitKubelet {
				kubelet = u.Version
			}
		}
		if pair, bad := ContainerdUnsupported(kubelet, n.Facts.Versions[ContainerdFact]); bad {
			b.block(CodeContainerdUnsupported, memberPath(c, i)+".nodeId", m.NodeID,
				fmt.Sprintf("install containerd %s or later on %s (kcore-containerd runs the containerd binary the agent finds in its --bin-dir, else on PATH), then plan again once its facts report it", pair.ContainerdMin, m.NodeID),
				"kubelet %s on %s needs containerd %s or later, the node has %s: %s",
				kubelet, m.NodeID, pair.ContainerdMin, n.Facts.Versions[ContainerdFact], pair.Why)
		}
	}
}

// checkCiliumInstaller warns about the member whose render runs the Cilium
// oneshot (helm upgrade --install of the chart at render.CiliumChartDir)
// when its facts list versions but no helm or no Cilium chart: the oneshot
// would fail there and the cluster would never be ready. A node that
// reports no versions at all is not checked.
func (b *builder) checkCiliumInstaller(c *api.KubernetesCluster, l render.Layout, states map[string]*api.NodeState) {
	for i, m := range c.Spec.Members() {
		n, ns := b.env.nodes[m.NodeID], states[m.NodeID]
		if n == nil || ns == nil || len(n.Facts.Versions) == 0 ||
			!slices.ContainsFunc(ns.Units, func(u api.Unit) bool { return u.Name == l.UnitCilium }) {
			continue
		}
		var missing, install []string
		if n.Facts.Versions[api.VersionHelm] == "" {
			missing, install = append(missing, "helm"), append(install, "helm")
		}
		if n.Facts.Versions[api.VersionCiliumChart] == "" {
			missing = append(missing, "Cilium chart in "+render.CiliumChartDir)
			install = append(install, "the Cilium chart (unpacked) in "+render.CiliumChartDir)
		}
		if len(missing) > 0 {
			what := strings.Join(missing, " and no ")
			b.warn(CodeCiliumInstallerMissing, memberPath(c, i)+".nodeId", m.NodeID,
				fmt.Sprintf("install %s on %s (on NixOS: kubernetes-helm and services.kcore.kubernetes.ciliumChart), then plan again once its facts report them", strings.Join(install, " and "), m.NodeID),
				"%s runs the Cilium oneshot %s (helm upgrade --install of the chart in %s), but its facts report no %s: until then the oneshot fails and the cluster cannot become ready",
				m.NodeID, l.UnitCilium, render.CiliumChartDir, what)
		}
	}
}

// ContainerdUnsupported reports whether containerd (a version as the node
// facts give it) is older than RuntimeSupport allows for kubelet, and the
// row that says so. Versions that do not parse, and kubelets no row
// covers, are not unsupported.
func ContainerdUnsupported(kubelet, containerd string) (RuntimePair, bool) {
	have, ok1 := minorOf(containerd)
	kv, ok2 := minorOf(kubelet)
	if !ok1 || !ok2 {
		return RuntimePair{}, false
	}
	pair, ok := runtimePairFor(kv)
	if !ok {
		return RuntimePair{}, false
	}
	need, _ := minorOf(pair.ContainerdMin)
	return pair, less(have, need)
}

// runtimePairFor is the table row covering kubelet minor version kv.
func runtimePairFor(kv [2]int) (RuntimePair, bool) {
	for _, p := range RuntimeSupport() {
		lo, _ := minorOf(p.KubeletMin)
		hi, bounded := minorOf(p.KubeletMax)
		if !less(kv, lo) && (!bounded || !less(hi, kv)) {
			return p, true
		}
	}
	return RuntimePair{}, false
}

// minorOf parses the major and minor of v1.37.2, 2.4.2, 1.6.20~ds1 or 1.36.
func minorOf(v string) ([2]int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	minor := parts[1]
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i]
	}
	maj, err1 := strconv.Atoi(parts[0])
	mnr, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil || maj < 0 || mnr < 0 {
		return [2]int{}, false
	}
	return [2]int{maj, mnr}, true
}

func less(a, b [2]int) bool { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]) }
