package rollout

import (
	"fmt"
	"slices"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// Rollback issue codes.
const (
	// CodeRollbackEtcdVersion blocks a rollback once every etcd member of a
	// cluster runs the new minor: etcd's cluster version has moved and
	// members of the old minor can no longer join.
	CodeRollbackEtcdVersion = "rollback-etcd-version"
	// CodeRollbackKubernetesMinor warns that a rollback takes API servers
	// back a minor version.
	CodeRollbackKubernetesMinor = "rollback-kubernetes-minor"
)

// CheckRollback says whether the steps that ran can be reversed, for
// `kctl update rollback` to print before StartRollback. It blocks when an
// etcd minor upgrade reached every control plane of a cluster (etcd then
// raises the cluster version and refuses older members; the way back is the
// snapshot taken before the first control plane), and warns when API
// servers would go back a minor version.
func CheckRollback(st api.UpdateStatus, p *RolloutPlan, clusters []*api.KubernetesCluster) (blocking, warnings []plan.Issue) {
	if len(st.Steps) != len(p.Steps) {
		return []plan.Issue{{Code: CodeInvalidUpdate, Message: fmt.Sprintf("status has %d steps, the plan %d", len(st.Steps), len(p.Steps))}}, nil
	}
	moved := map[string]bool{}
	snapshot := map[string]int{}
	for i, s := range p.Steps {
		for _, c := range s.SnapshotBefore {
			snapshot[c] = i
		}
		if s.Scope == ScopeKubelet || st.Steps[i].State != StepDone {
			continue
		}
		for _, n := range s.Nodes {
			if n.Role == api.RoleControlPlane {
				moved[n.ID] = true
			}
		}
	}
	for _, c := range clusters {
		cps := c.Spec.ControlPlaneNodes
		if len(cps) == 0 || !slices.ContainsFunc(cps, func(m api.ClusterNode) bool { return moved[m.NodeID] }) {
			continue
		}
		name := c.Metadata.Name
		all := !slices.ContainsFunc(cps, func(m api.ClusterNode) bool { return !moved[m.NodeID] })
		if all && minorChange(p.Etcd) {
			blocking = append(blocking, plan.Issue{Code: CodeRollbackEtcdVersion, Cluster: name,
				Message: fmt.Sprintf("every etcd member of %s runs etcd %s now, so etcd's cluster version has moved and members on %s cannot rejoin", name, p.Etcd.To, p.Etcd.From[0]),
				Fix:     fmt.Sprintf("fix forward (`kctl update resume %s`), or restore %s from the etcd snapshot taken before step %d (`kctl kubernetes etcd restore %s --from SNAPSHOT`)", p.Name, name, snapshot[name]+1, name)})
		}
		if minorChange(p.Kubernetes) {
			warnings = append(warnings, plan.Issue{Code: CodeRollbackKubernetesMinor, Cluster: name,
				Message: fmt.Sprintf("the API servers of %s go back from Kubernetes %s to %s; objects the newer release stored in a newer storage version may not be readable", name, p.Kubernetes.To, p.Kubernetes.From[0]),
				Fix:     "prefer fixing forward; if you roll back, check `kubectl get --raw /readyz` and the API server logs on each control plane"})
		}
	}
	return blocking, warnings
}

// minorChange reports whether a version change crosses a minor version.
func minorChange(v *VersionChange) bool {
	if v == nil || len(v.From) == 0 {
		return false
	}
	to, ok := parseVersion(v.To)
	if !ok {
		return false
	}
	for _, f := range v.From {
		if fv, ok := parseVersion(f); ok && to.minorsAbove(fv) != 0 {
			return true
		}
	}
	return false
}
