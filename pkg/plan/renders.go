package plan

import (
	"gopkg.in/yaml.v3"

	"slices"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// UnreportedPool is the storage pool a plan renders for a volume without a
// volumeGroup on a node that has not reported its storage backends yet.
const UnreportedPool = "(not-reported)"

// renderFor renders c for a plan with the orchestrator's render code:
// placeholder secrets (pki.Placeholder: the subjects and SANs pki will
// issue, no key material), the registered nodes' facts, the Input's render
// options and status, the stored status the cluster keeps (node pins,
// release). existing says etcd is already running or being formed, as the
// orchestrator renders for a stored cluster. A cluster that cannot be
// rendered blocks the plan unless an issue already blocks it.
func (b *builder) renderFor(c *api.KubernetesCluster, status api.ClusterStatus, existing bool) map[string]*api.NodeState {
	if c == nil {
		return map[string]*api.NodeState{}
	}
	rc := *c
	rc.Status = status
	if !existing {
		// A new cluster's CAs are of its spec's generation.
		st := rc.CAStateAfterApply(false)
		rc.Status.CAGeneration, rc.Status.CARotation = st.Generation, st.Rotation
	}
	sec, err := pki.Placeholder(&rc)
	if err == nil {
		opts := b.env.opts
		opts.UnreportedPool = UnreportedPool
		opts.EtcdClusterExists = existing
		opts.EtcdRestoreSnapshot = nil // a snapshot is data, never part of a plan
		var out map[string]*api.NodeState
		if out, err = render.Render(&rc, sec, b.env.nodes, opts); err == nil {
			return out
		}
	}
	if !blocks(b.plan, b.cluster) {
		b.block(CodeRenderFailed, "", "", "correct the manifest and plan again",
			"the cluster cannot be rendered: %v", err)
	}
	return nil
}

// plannedChange is one node's rendered diff with where it stands in the cluster.
type plannedChange struct {
	NodeChange
	controlPlane bool
	// taint is the control-plane taint the Node object gains ("added") or
	// loses ("removed") on a node that stays: kubelet's taint flag applies
	// only when it first registers, so the orchestrator patches the Node.
	taint string
	// kubeDNSReplaced: the node applies the kube-dns Service with another
	// cluster IP than before, which kubectl apply --force does by deleting
	// the Service and creating it again.
	kubeDNSReplaced bool
}

// controlPlaneTaint is the taint kubelet registers a control plane with
// unless scheduleOnControlPlane.
const controlPlaneTaint = "node-role.kubernetes.io/control-plane:NoSchedule"

// tainted reports whether ns's kubelet registers with controlPlaneTaint.
func tainted(ns *api.NodeState) bool {
	if ns == nil {
		return false
	}
	for _, u := range ns.Units {
		if u.Name == render.UnitKubelet {
			return slices.Contains(u.Argv, "--register-with-taints="+controlPlaneTaint)
		}
	}
	return false
}

// fileContent is the content of ns's file at path, "" when it has none.
func fileContent(ns *api.NodeState, path string) string {
	for _, f := range ns.Files {
		if f.Path == path {
			return f.Content
		}
	}
	return ""
}

// serviceIP is the spec.clusterIP of the Service manifest content, ""
// when there is none or it does not parse.
func serviceIP(content string) string {
	var svc struct {
		Kind string `yaml:"kind"`
		Spec struct {
			ClusterIP string `yaml:"clusterIP"`
		} `yaml:"spec"`
	}
	if content == "" || yaml.Unmarshal([]byte(content), &svc) != nil || svc.Kind != "Service" {
		return ""
	}
	return svc.Spec.ClusterIP
}

// diffRenders compares the stored render with the desired one node by
// node, in the order changes are applied: joining nodes (control planes
// first, in manifest order), leaving nodes (workers first, then control
// planes in leaveOrder), then the nodes that stay.
func diffRenders(l render.Layout, old, cur *api.KubernetesCluster, oldStates, curStates map[string]*api.NodeState, leaveOrder func([]string) []string) []plannedChange {
	var joins, stays, leaveW, leaveCP []string
	isCP := map[string]bool{}
	for _, c := range []*api.KubernetesCluster{old, cur} {
		if c != nil {
			for _, m := range c.Spec.ControlPlaneNodes {
				isCP[m.NodeID] = true
			}
		}
	}
	if cur != nil {
		for _, m := range cur.Spec.Members() {
			if isMember(old, m.NodeID) {
				stays = append(stays, m.NodeID)
			} else {
				joins = append(joins, m.NodeID)
			}
		}
	}
	if old != nil {
		for _, m := range old.Spec.WorkerNodes {
			if !isMember(cur, m.NodeID) {
				leaveW = append(leaveW, m.NodeID)
			}
		}
		for _, m := range old.Spec.ControlPlaneNodes {
			if !isMember(cur, m.NodeID) {
				leaveCP = append(leaveCP, m.NodeID)
			}
		}
	}
	order := slices.Concat(joins, leaveW, leaveOrder(leaveCP), stays)
	out := make([]plannedChange, 0, len(order))
	for _, id := range order {
		nc := NodeDiff(oldStates[id], curStates[id])
		if nc.Node == "" {
			nc.Node = id
		}
		pc := plannedChange{NodeChange: nc, controlPlane: isCP[id]}
		if oldStates[id] != nil && curStates[id] != nil {
			switch was, is := tainted(oldStates[id]), tainted(curStates[id]); {
			case is && !was:
				pc.taint = "added"
			case was && !is:
				pc.taint = "removed"
			}
			was, is := serviceIP(fileContent(oldStates[id], l.KubeDNSService)), serviceIP(fileContent(curStates[id], l.KubeDNSService))
			pc.kubeDNSReplaced = was != "" && is != "" && was != is
		}
		out = append(out, pc)
	}
	return out
}
