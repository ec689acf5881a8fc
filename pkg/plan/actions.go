package plan

import (
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

func (b *builder) planCreate(j job) ClusterPlan {
	c := j.desired
	b.validate(c)
	b.checkMembers(c, nil)
	b.checkCilium(c, nil)
	b.checkAddresses(c, nil)
	b.checkStorage(volumeDemands(c, nil))
	b.checkDisks(c, nil)
	b.checkTopology(c)
	b.checkFsync(c, nil)
	b.checkInitialCluster(c)
	status := b.place(c, nil, api.ClusterStatus{})
	b.checkSharing(c, status)
	s := &stepper{etcd: newEtcdState(nil, b.env.ready)}
	b.createSteps(s, c, status)
	return ClusterPlan{Name: j.name, Action: ActionCreate, Steps: s.steps, Desired: c, Slot: status.Slot, Shared: status.Shared}
}

// createSteps renders c from nothing with status (its placement): every
// node joins.
func (b *builder) createSteps(s *stepper, c *api.KubernetesCluster, status api.ClusterStatus) {
	if cur := b.renderFor(c, status, false); cur != nil {
		l := layoutOf(c.Metadata.Name, status)
		b.checkRuntime(c, l, cur)
		b.checkCiliumInstaller(c, l, cur)
		b.stepsFromDiff(s, modeCreate, l, diffRenders(l, nil, c, nil, cur, keepOrder))
	}
}

// updateSteps diffs the render of the stored cluster with the render of
// next: the stored status, and for next that status with next's placement
// (members it adds may land on shared machines).
func (b *builder) updateSteps(s *stepper, j job, next *api.KubernetesCluster, nextStatus api.ClusterStatus, leaveOrder func([]string) []string) {
	status := b.env.status[j.name]
	old := b.renderFor(j.stored, status, true)
	if old == nil {
		return
	}
	cur := b.renderFor(next, nextStatus, true)
	if cur == nil {
		return
	}
	l := layoutOf(j.name, status)
	b.checkRuntime(next, l, cur)
	b.checkCiliumInstaller(next, l, cur)
	pcs := diffRenders(l, j.stored, next, old, cur, leaveOrder)
	if s.replace {
		pcs = leavesFirst(pcs)
	}
	first := len(s.steps)
	b.stepsFromDiff(s, modeUpdate, l, pcs)
	b.rotationSteps(s, j, next, nextStatus, cur, first, l)
}

// teardownSteps renders the stored cluster and diffs it with nothing:
// workers leave first, then the control planes in reverse order so the
// bootstrap node goes last. Volumes are kept on disk.
func (b *builder) teardownSteps(s *stepper, j job) {
	status := b.env.status[j.name]
	if old := b.renderFor(j.stored, status, true); old != nil {
		tl := layoutOf(j.name, status)
		b.stepsFromDiff(s, modeTeardown, tl, diffRenders(tl, j.stored, nil, old, nil, reverseOrder))
	}
}

func keepOrder(ids []string) []string { return ids }

func reverseOrder(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

func (b *builder) planUpdate(j job) ClusterPlan {
	c := j.desired
	changes := diffClusters(j.stored, c)
	if len(changes) == 0 {
		return ClusterPlan{Name: j.name, Action: ActionNoOp}
	}
	if rs := replacementsOf(j.stored, c); rs != nil {
		j.scale = &ScaleRequest{Cluster: j.name, Replace: rs}
		return b.planScale(j)
	}
	if sr := scaleOf(j.stored, c); sr != nil {
		j.scale = sr
		return b.planScale(j)
	}
	b.validate(c)
	b.busy(j)
	b.checkImmutable(changes, j)
	b.checkCAGeneration(j, c)
	b.checkMembership(changes, j.name)
	b.checkVolumeChanges(changes)
	b.checkMembers(c, nil)
	b.checkCilium(c, j.stored)
	b.checkAddresses(c, j.stored)
	b.checkStorage(volumeDemands(c, j.stored))
	b.checkDisks(c, j.stored)
	b.staleMembers(j, nil)
	status := b.place(c, j.stored, b.env.status[j.name])
	b.checkSharing(c, status)
	s := &stepper{etcd: newEtcdState(memberIDs(j.stored.Spec.ControlPlaneNodes), b.env.ready)}
	if !blocks(b.plan, j.name) {
		b.updateSteps(s, j, c, status, keepOrder)
	}
	return ClusterPlan{Name: j.name, Action: ActionUpdate, Diff: fieldChanges(changes), Steps: s.steps, Desired: c, Slot: status.Slot, Shared: status.Shared}
}

func (b *builder) planReplace(j job) ClusterPlan {
	c := j.desired
	b.validate(c)
	b.busy(j)
	b.checkMembers(c, nil)
	b.checkCilium(c, j.stored)
	b.checkAddresses(c, j.stored)
	b.checkStorage(volumeDemands(c, j.stored))
	b.checkDisks(c, j.stored)
	b.checkTopology(c)
	b.checkFsync(c, nil)
	b.checkInitialCluster(c)
	status := b.place(c, nil, api.ClusterStatus{})
	b.checkSharing(c, status)
	s := &stepper{etcd: newEtcdState(memberIDs(j.stored.Spec.ControlPlaneNodes), b.env.ready), teardown: true}
	b.teardownSteps(s, j)
	s.etcd, s.teardown = newEtcdState(nil, b.env.ready), false
	b.createSteps(s, c, status)
	return ClusterPlan{Name: j.name, Action: ActionReplace, Diff: fieldChanges(diffClusters(j.stored, c)), Steps: s.steps, Desired: c, Slot: status.Slot, Shared: status.Shared}
}

func (b *builder) planDelete(j job) ClusterPlan {
	b.busy(j)
	s := &stepper{etcd: newEtcdState(memberIDs(j.stored.Spec.ControlPlaneNodes), b.env.ready), teardown: true}
	b.teardownSteps(s, j)
	return ClusterPlan{Name: j.name, Action: ActionDelete, Steps: s.steps}
}

// volumeDemands lists the space c's volumes need beyond what before already has.
func volumeDemands(c, before *api.KubernetesCluster) []demand {
	var out []demand
	for i, v := range c.Spec.LocalProvisioner.Volumes {
		d := demand{path: fmt.Sprintf("spec.localProvisioner.volumes[%d]", i), vol: v}
		if before != nil {
			if o, ok := findVolume(before, v.NodeID, v.Name); ok {
				d.from = o.SizeBytes
			}
		}
		if d.need() > 0 {
			out = append(out, d)
		}
	}
	return out
}

// checkImmutable blocks changing what a running cluster cannot change in place.
func (b *builder) checkImmutable(changes []change, j job) {
	fix := fmt.Sprintf("create a new cluster with the new value and migrate the workloads, or delete and recreate %s (`kctl kubernetes delete %s`, then apply; its etcd data and workloads are lost)", j.name, j.name)
	for _, c := range changes {
		why := ""
		switch c.key {
		case "spec.clusterCidr":
			why = "every pod address and Cilium's native-routing CIDR derive from it"
		case "spec.serviceCidr":
			why = "every service's cluster IP and the API server's service address derive from it"
		case "spec.cni":
			why = "pods would lose their network; an API port other than 6443 stores the cluster with bridge, so changing that port changes cni too"
		case "spec.localProvisioner.mode":
			if len(j.stored.Spec.LocalProvisioner.Volumes) == 0 {
				continue
			}
			why = "its volumes would have to be recreated as " + c.New + " volumes"
		default:
			continue
		}
		b.block(CodeImmutableField, c.Path, "", fix, "%s cannot change on a running cluster (%q → %q): %s", lastSegment(c.Path), c.Old, c.New, why)
	}
}

// checkMembership blocks adding, removing or readdressing members in a
// re-apply that changes anything else too (an edit that only adds or
// removes members is planned as the scale it is: scaleOf).
func (b *builder) checkMembership(changes []change, name string) {
	for _, c := range changes {
		var what, fix string
		switch {
		case c.key == "spec.controlPlaneNodes[]" && c.Old == "":
			what, fix = "adds control plane "+c.node, fmt.Sprintf("kctl kubernetes scale %s --add-control-plane %s", name, scaleArg(c.New))
		case c.key == "spec.workerNodes[]" && c.Old == "":
			what, fix = "adds worker "+c.node, fmt.Sprintf("kctl kubernetes scale %s --add-workers %s", name, scaleArg(c.New))
		case (c.key == "spec.controlPlaneNodes[]" || c.key == "spec.workerNodes[]") && c.New == "":
			what, fix = "removes "+c.node, fmt.Sprintf("kctl kubernetes scale %s --remove %s", name, c.node)
		case c.key == "spec.controlPlaneNodes[].advertiseAddress" || c.key == "spec.workerNodes[].advertiseAddress":
			what, fix = "changes the address of "+c.node, fmt.Sprintf("kctl kubernetes scale %s --remove %s, then add it back with the new address", name, c.node)
		default:
			continue
		}
		b.block(CodeMembershipChange, c.Path, c.node, "use `"+fix+"`, or apply the membership change alone; apply does not change membership together with other fields",
			"the manifest %s: membership changes join or remove etcd members and need a scale plan", what)
	}
}

// scaleArg turns a rendered node "id addr iface" into the scale flag's id:addr.
func scaleArg(rendered string) string {
	f := strings.Fields(rendered)
	if len(f) < 2 {
		return rendered
	}
	return f[0] + ":" + f[1]
}

func fieldChanges(changes []change) []FieldChange {
	out := make([]FieldChange, 0, len(changes))
	for _, c := range changes {
		out = append(out, c.FieldChange)
	}
	return out
}

func findVolume(c *api.KubernetesCluster, node, name string) (api.VolumeSpec, bool) {
	for _, v := range c.Spec.LocalProvisioner.Volumes {
		if v.NodeID == node && v.Name == name {
			return v, true
		}
	}
	return api.VolumeSpec{}, false
}
