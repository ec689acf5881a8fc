package plan

import (
	"fmt"
	"slices"

	"kcore.dev/kcore/pkg/api"
)

// checkTopology warns about control-plane layouts that tolerate fewer
// failures than they seem to: an even count, and a failure domain whose loss
// loses etcd quorum.
func (b *builder) checkTopology(c *api.KubernetesCluster) {
	cps := memberIDs(c.Spec.ControlPlaneNodes)
	n := len(cps)
	if n > 0 && n%2 == 0 {
		b.warn(CodeEvenControlPlanes, "spec.controlPlaneNodes", "",
			fmt.Sprintf("use an odd number: %d control planes tolerate %s", n+1, plural(n+1-quorumOf(n+1), "failure")),
			"%d control-plane nodes need %d for quorum and tolerate %s, no more than %d would", n, quorumOf(n), plural(n-quorumOf(n), "failure"), n-1)
	}
	if n < 2 {
		return
	}
	domains := map[string][]string{}
	var order []string
	for _, id := range cps {
		d := failureDomain(b.env.nodes[id])
		if d == "" {
			continue
		}
		if domains[d] == nil {
			order = append(order, d)
		}
		domains[d] = append(domains[d], id)
	}
	largest := ""
	for _, d := range order {
		if len(domains[d]) > len(domains[largest]) {
			largest = d
		}
	}
	if lost := domains[largest]; len(lost) >= 2 && n-len(lost) < quorumOf(n) {
		b.warn(CodeFailureDomainShared, "spec.controlPlaneNodes", "",
			fmt.Sprintf("spread the control planes over failure domains so that none holds %d or more of %d (label nodes with %s)", n-quorumOf(n)+1, n, api.FailureDomainLabel),
			"control planes %s share failure domain %q: losing it leaves %d of %d etcd members, below the quorum of %d", names(lost), largest, n-len(lost), n, quorumOf(n))
	}
}

// failureDomain is the node's kcore.dev/failure-domain label from its facts,
// or else from its metadata; "" when unknown.
func failureDomain(n *api.Node) string {
	if n == nil {
		return ""
	}
	if d := n.Facts.Labels[api.FailureDomainLabel]; d != "" {
		return d
	}
	return n.Metadata.Labels[api.FailureDomainLabel]
}

// checkFsync warns about control planes whose etcd disk is slower than etcd's guidance.
func (b *builder) checkFsync(c *api.KubernetesCluster, only func(string) bool) {
	for i, m := range c.Spec.ControlPlaneNodes {
		n := b.env.nodes[m.NodeID]
		if n == nil || n.Facts.Fsync == nil || (only != nil && !only(m.NodeID)) {
			continue
		}
		if f := n.Facts.Fsync; f.P99Millis > SlowFsyncMillis {
			b.warn(CodeSlowFsync, fmt.Sprintf("spec.controlPlaneNodes[%d]", i), m.NodeID,
				"put etcd's data directory on a dedicated SSD or NVMe disk, or pick a control plane with a faster disk",
				"fsync on the etcd data directory of %s takes %s at p99 (p50 %s); etcd's guidance is a p99 below %d ms, slower disks cause leader elections and write stalls",
				m.NodeID, millis(f.P99Millis), millis(f.P50Millis), SlowFsyncMillis)
		}
	}
}

// checkInitialCluster warns that spec.initialCluster has no effect.
func (b *builder) checkInitialCluster(c *api.KubernetesCluster) {
	if c.Spec.InitialCluster == "" {
		return
	}
	b.warn(CodeInitialClusterIgnored, "spec.initialCluster", "",
		"remove initialCluster from the manifest",
		"initialCluster is ignored: etcd membership comes from controlPlaneNodes, the first entry (%s) bootstraps", firstCP(c))
}

func firstCP(c *api.KubernetesCluster) string {
	if len(c.Spec.ControlPlaneNodes) == 0 {
		return ""
	}
	return c.Spec.ControlPlaneNodes[0].NodeID
}

func contains(ids []string) func(string) bool {
	return func(id string) bool { return slices.Contains(ids, id) }
}
