package rollout

import (
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// k8sVersions are the Kubernetes versions a node runs now; ok is false when
// the facts do not say.
type k8sVersions struct {
	api, kubelet     version
	apiOK, kubeletOK bool
}

// nodeK8s reads a node's versions from its facts. A control plane's API
// server falls back to its kubelet's version and the other way round, since
// kcore moves a node's components together.
func nodeK8s(n *api.Node, controlPlane bool) k8sVersions {
	var v k8sVersions
	if n == nil {
		return v
	}
	v.kubelet, v.kubeletOK = parseVersion(n.Facts.Versions[VersionKubelet])
	if controlPlane {
		v.api, v.apiOK = parseVersion(n.Facts.Versions[VersionAPIServer])
		if !v.apiOK {
			v.api, v.apiOK = v.kubelet, v.kubeletOK
		}
		if !v.kubeletOK {
			v.kubelet, v.kubeletOK = v.api, v.apiOK
		}
	}
	return v
}

// current is the version a node's role runs: the API server on a control
// plane, the kubelet elsewhere.
func (v k8sVersions) current(controlPlane bool) (version, bool) {
	if controlPlane {
		return v.api, v.apiOK
	}
	return v.kubelet, v.kubeletOK
}

// kubernetesRules checks tested_os_pins.kubernetes_version against what the
// target nodes run and chooses the rollout order. It returns the order, its
// reason, the version change and the issues; the step projection is checked
// separately (checkProjection) once the steps exist.
func kubernetesRules(e *env, targets []*target) (order, reason string, change *VersionChange, blocking, warnings []plan.Issue) {
	raw := e.spec.TestedOSPins.KubernetesVersion
	to, ok := parseVersion(raw)
	if raw == "" || !ok {
		if e.spec.UpdateKind != api.UpdateKindK8s && hasMembers(targets) {
			warnings = append(warnings, plan.Issue{Code: CodeKubernetesVersionUnknown, Path: "spec.testedOsPins.kubernetesVersion",
				Message: "the release does not say which Kubernetes version its pin carries, so the version-skew policy and the etcd upgrade path are not checked",
				Fix:     "set tested_os_pins.kubernetes_version to the version the release was tested with"})
		}
		return OrderWorkersFirst, "workers first, then control planes one at a time: the Kubernetes version is not expected to change", nil, nil, warnings
	}
	var from []version
	var unknown, downgraded []string
	up, minorUp := false, false
	for _, t := range targets {
		if t.role == RoleStandalone {
			continue
		}
		cp := t.role == api.RoleControlPlane
		cur, ok := nodeK8s(t.node, cp).current(cp)
		if !ok {
			unknown = append(unknown, t.id)
			continue
		}
		if !slices.ContainsFunc(from, func(v version) bool { return v.compare(cur) == 0 }) {
			from = append(from, cur)
		}
		d := to.minorsAbove(cur)
		switch {
		case d > 1:
			blocking = append(blocking, skewIssue(t, fmt.Sprintf("tested_os_pins.kubernetes_version %s skips a minor version: node %s runs %s, and Kubernetes upgrades one minor version at a time (%s → %s)", to, t.id, cur, cur.minorString(), nextMinor(cur)),
				fmt.Sprintf("roll out a release pinned to Kubernetes %s first, then this one", nextMinor(cur))))
		case d < 0:
			blocking = append(blocking, skewIssue(t, fmt.Sprintf("tested_os_pins.kubernetes_version %s downgrades node %s from %s by a minor version; Kubernetes supports no minor downgrade (the API server may have migrated stored objects)", to, t.id, cur),
				"restore the cluster from the etcd snapshot taken before the upgrade (`kctl kubernetes etcd restore`), or roll out a release on "+cur.minorString()))
		case d == 1:
			up, minorUp = true, true
		case to.patch >= 0 && cur.patch >= 0 && to.patch > cur.patch:
			up = true
		case to.patch >= 0 && cur.patch >= 0 && to.patch < cur.patch:
			downgraded = append(downgraded, t.id)
		}
	}
	slices.SortFunc(from, version.compare)
	change = &VersionChange{From: versionsOf(from), To: to.String()}
	if len(unknown) > 0 {
		warnings = append(warnings, plan.Issue{Code: CodeNodeVersionsUnknown,
			Message: fmt.Sprintf("%s report no %s or %s version, so the version-skew policy is checked without them", names(unknown), VersionAPIServer, VersionKubelet),
			Fix:     "upgrade the node agent so its facts carry the versions, then plan again"})
	}
	if len(downgraded) > 0 {
		warnings = append(warnings, plan.Issue{Code: CodeKubernetesPatchDowngrade, Path: "spec.testedOsPins.kubernetesVersion",
			Message: fmt.Sprintf("Kubernetes %s is a patch downgrade for %s (now on %s); patch versions of one minor are compatible, so it is allowed", to, names(downgraded), strings.Join(versionsOf(from), ", ")),
			Fix:     "check that the release really means to go back to " + to.String()})
	}
	switch {
	case minorUp:
		return OrderControlPlaneComponentsFirst, "control-plane components first (etcd, kube-apiserver, controller-manager, scheduler) one control plane at a time with their kubelets held back, then the control planes' kubelets, then the workers: Kubernetes moves to a new minor version and no kubelet may be newer than any API server", change, blocking, warnings
	case up:
		return OrderControlPlanesFirst, "control planes first, one at a time, then the workers: Kubernetes moves to a newer patch and API servers are upgraded before kubelets", change, blocking, warnings
	}
	return OrderWorkersFirst, "workers first, then control planes one at a time: the Kubernetes minor version does not change", change, blocking, warnings
}

func skewIssue(t *target, msg, fix string) plan.Issue {
	return plan.Issue{Code: CodeKubernetesVersionSkew, Cluster: first(clusterNames(t.clusters)), Path: "spec.testedOsPins.kubernetesVersion", Node: t.id, Message: msg, Fix: fix}
}

func nextMinor(v version) string { return fmt.Sprintf("%d.%d", v.major, v.minor+1) }

func hasMembers(targets []*target) bool {
	return slices.ContainsFunc(targets, func(t *target) bool { return t.role != RoleStandalone })
}

// skewState is one cluster's projected Kubernetes versions: per control
// plane its API server (controller-manager and scheduler talk to the local
// API server and move with it), per member its kubelet.
type skewState struct {
	api     map[string]version
	kubelet map[string]version
}

// checkProjection walks the steps and checks the Kubernetes version-skew
// policy on each cluster's projected versions after every step: all API
// servers within one minor version of each other, and every kubelet no
// newer than the oldest API server and at most three minor versions older
// than the newest. Kubelets reach the API through the endpoint (the VIP),
// so any API server may answer them. It reports the first violation per
// cluster.
func checkProjection(e *env, steps []Step, to version) []plan.Issue {
	var out []plan.Issue
	for _, c := range e.clusters {
		if !touches(steps, c.Metadata.Name) {
			continue
		}
		st := skewState{api: map[string]version{}, kubelet: map[string]version{}}
		for _, m := range c.Spec.Members() {
			cp := c.Spec.IsControlPlane(m.NodeID)
			v := nodeK8s(e.nodes[m.NodeID], cp)
			if cp && v.apiOK {
				st.api[m.NodeID] = v.api
			}
			if v.kubeletOK {
				st.kubelet[m.NodeID] = v.kubelet
			}
		}
		for i, s := range steps {
			for _, n := range s.Nodes {
				if !slices.Contains(n.Clusters, c.Metadata.Name) {
					continue
				}
				if _, ok := st.api[n.ID]; ok && s.Scope != ScopeKubelet {
					st.api[n.ID] = to
				}
				if _, ok := st.kubelet[n.ID]; ok && s.Scope != ScopeControlPlane {
					st.kubelet[n.ID] = to
				}
			}
			if node, msg := st.violation(); msg != "" {
				out = append(out, plan.Issue{Code: CodeKubernetesVersionSkew, Cluster: c.Metadata.Name, Node: node, Path: "spec.testedOsPins.kubernetesVersion",
					Message: fmt.Sprintf("after step %d (%s) %s", i+1, strings.Join(s.NodeIDs(), ", "), msg),
					Fix:     "update every control plane of the cluster in the same rollout (allNodes, or list them in spec.nodes), or roll out one minor version at a time"})
				break
			}
		}
	}
	return out
}

// violation returns the node and message of the first skew-policy violation.
func (s skewState) violation() (string, string) {
	if len(s.api) == 0 {
		return "", ""
	}
	ids := sortedKeys(s.api)
	oldest, newest := ids[0], ids[0]
	for _, id := range ids {
		if s.api[id].minorKey() < s.api[oldest].minorKey() {
			oldest = id
		}
		if s.api[id].minorKey() > s.api[newest].minorKey() {
			newest = id
		}
	}
	lo, hi := s.api[oldest], s.api[newest]
	if hi.minorsAbove(lo) > 1 {
		return oldest, fmt.Sprintf("the API servers would be %s (%s) and %s (%s), more than one minor version apart", hi, newest, lo, oldest)
	}
	for _, id := range sortedKeys(s.kubelet) {
		k := s.kubelet[id]
		if k.minorsAbove(lo) > 0 {
			return id, fmt.Sprintf("the kubelet on %s would be %s, newer than the API server on %s (%s)", id, k, oldest, lo)
		}
		if hi.minorsAbove(k) > 3 {
			return id, fmt.Sprintf("the kubelet on %s would be %s, more than three minor versions older than the API server on %s (%s)", id, k, newest, hi)
		}
	}
	return "", ""
}

func sortedKeys(m map[string]version) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// etcdRules checks the etcd upgrade path: etcd moves one minor version at a
// time and never down. The target is the etcd minor the Kubernetes target
// ships with (etcdFor).
func etcdRules(targets []*target, k8s version) (*VersionChange, []plan.Issue, []plan.Issue) {
	var cps []*target
	for _, t := range targets {
		if t.role == api.RoleControlPlane {
			cps = append(cps, t)
		}
	}
	if len(cps) == 0 {
		return nil, nil, nil
	}
	to, ok := etcdFor(k8s)
	if !ok {
		return nil, nil, []plan.Issue{{Code: CodeEtcdVersionUnknown, Path: "spec.testedOsPins.kubernetesVersion",
			Message: fmt.Sprintf("kcore does not know which etcd version Kubernetes %s ships with, so the etcd upgrade path is not checked", k8s.minorString()),
			Fix:     "use a kctl that knows this Kubernetes release, or check by hand that etcd moves at most one minor version"}}
	}
	var blocking []plan.Issue
	var from []version
	for _, t := range cps {
		cur, ok := parseVersion(t.node.Facts.Versions[VersionEtcd])
		if !ok {
			continue
		}
		if !slices.ContainsFunc(from, func(v version) bool { return v.compare(cur) == 0 }) {
			from = append(from, cur)
		}
		d := to.minorsAbove(cur)
		if d >= 0 && d <= 1 {
			continue
		}
		is := plan.Issue{Code: CodeEtcdUpgradePath, Cluster: first(clusterNames(t.clusters)), Node: t.id, Path: "spec.testedOsPins.kubernetesVersion"}
		if d > 1 {
			is.Message = fmt.Sprintf("Kubernetes %s runs etcd %s, but node %s runs etcd %s: etcd upgrades one minor version at a time (%s → %s)", k8s, to, t.id, cur, cur.minorString(), nextMinor(cur))
			is.Fix = fmt.Sprintf("roll out a release whose Kubernetes ships etcd %s first", nextMinor(cur))
		} else {
			is.Message = fmt.Sprintf("Kubernetes %s runs etcd %s, but node %s runs etcd %s: kcore does not downgrade etcd (its data may use the newer storage version)", k8s, to, t.id, cur)
			is.Fix = "restore the cluster from the etcd snapshot taken before the upgrade (`kctl kubernetes etcd restore`), or roll out a release that keeps etcd " + cur.minorString()
		}
		blocking = append(blocking, is)
	}
	if len(from) == 0 {
		return nil, blocking, nil
	}
	slices.SortFunc(from, version.compare)
	return &VersionChange{From: versionsOf(from), To: to.String()}, blocking, nil
}

func versionsOf(vs []version) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

// names joins node ids for messages: "node-105, node-107 and node-103".
func names(ids []string) string {
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return ids[0]
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}

// touches reports whether a step updates a member of the cluster.
func touches(steps []Step, cluster string) bool {
	for _, s := range steps {
		for _, n := range s.Nodes {
			if slices.Contains(n.Clusters, cluster) {
				return true
			}
		}
	}
	return false
}
