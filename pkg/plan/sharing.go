package plan

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// layoutOf is the layout of cluster name rendering with status; a slot
// out of range (the render fails and says so) falls back to the primary's.
func layoutOf(name string, status api.ClusterStatus) render.Layout {
	l, err := render.LayoutFor(name, status.Slot)
	if err != nil {
		l, _ = render.LayoutFor(name, render.PrimarySlot)
	}
	return l
}

// others are the stored clusters other than name, as render.Place sees them.
func (b *builder) others(name string) []render.Occupant {
	var out []render.Occupant
	for _, n := range b.env.storedNames {
		if n == name {
			continue
		}
		o := render.OccupantOf(b.env.stored[n])
		o.Slot = b.env.status[n].Slot
		out = append(out, o)
	}
	return out
}

// place is the status c renders with: base (the stored status, or empty
// on create) with the slot and shared members render.Place gives it among
// the other stored clusters. stored is c as stored, nil on create (a
// replace places the new cluster afresh). No free slot blocks the plan.
func (b *builder) place(c, stored *api.KubernetesCluster, base api.ClusterStatus) api.ClusterStatus {
	if stored != nil {
		// The env keeps stored clusters without their status: Place
		// needs the recorded slot and shared members.
		st := *stored
		st.Status = b.env.status[c.Metadata.Name]
		stored = &st
	}
	slot, shared, err := render.Place(c, b.others(c.Metadata.Name), stored)
	if errors.Is(err, render.ErrNoSlot) {
		b.block(CodeNoSlot, "spec.controlPlaneNodes", "",
			"put the cluster on machines that run fewer clusters, or delete one of the clusters there",
			"%v", err)
	}
	base.Slot, base.Shared = slot, shared
	return base
}

// checkSharing blocks what c (rendering with status) would share with
// another stored cluster on a machine both use: the slot, a port, the VRRP
// router id, overlapping pod or service CIDRs, a file path, unit, task or
// volume; a worker on a machine another cluster already runs a kubelet on;
// and a cluster none of whose nodes would run a kubelet. It says which
// control planes run without a kubelet.
func (b *builder) checkSharing(c *api.KubernetesCluster, status api.ClusterStatus) {
	name := c.Metadata.Name
	mine, err := render.LayoutFor(name, status.Slot)
	if err != nil {
		return
	}
	for i, m := range c.Spec.WorkerNodes {
		if slices.Contains(status.Shared, m.NodeID) {
			b.block(CodeWorkerOnSharedMachine, fmt.Sprintf("spec.workerNodes[%d].nodeId", i), m.NodeID,
				"drop the worker, or pick a machine no other cluster runs on; a machine is a Kubernetes node of one cluster only",
				"worker %s is on a machine another cluster already uses: it would run no kubelet there", m.NodeID)
		}
	}
	for i, m := range c.Spec.ControlPlaneNodes {
		if slices.Contains(status.Shared, m.NodeID) {
			b.warn(CodeControlPlaneOnly, fmt.Sprintf("spec.controlPlaneNodes[%d].nodeId", i), m.NodeID,
				"run workloads on the cluster's other nodes; this machine is already another cluster's node",
				"%s runs %s's control plane only (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, keepalived), no kubelet", m.NodeID, name)
		}
	}
	if len(status.Shared) > 0 && !slices.ContainsFunc(c.Spec.Members(), func(m api.ClusterNode) bool { return !slices.Contains(status.Shared, m.NodeID) }) {
		b.block(CodeNoPodNode, "spec.workerNodes", "",
			"add a worker on a machine no other cluster runs on",
			"every node of %s is on a machine another cluster already uses, so none runs a kubelet: CoreDNS and every other pod would stay Pending and the cluster could not be ready", name)
	}
	var mineRender map[string]*api.NodeState
	for _, on := range b.env.storedNames {
		if on == name {
			continue
		}
		o, ost := b.env.stored[on], b.env.status[on]
		nodes := sharedMachines(c, o)
		if len(nodes) == 0 {
			continue
		}
		theirs, err := render.LayoutFor(on, ost.Slot)
		if err != nil {
			continue
		}
		if mine.Slot == theirs.Slot {
			b.block(CodeSlotInUse, "spec", nodes[0],
				"keep the cluster off the machines of "+on+", or delete and recreate it so it is placed in a free slot",
				"cluster %s holds slot %d on %s too: both would use the same units, ports and router id", on, mine.Slot, nodes[0])
		}
		b.checkCIDRs(c, o)
		for _, n := range nodes {
			for _, p := range portsOn(c, mine, n) {
				if slices.Contains(portsOn(o, theirs, n), p) {
					b.block(CodePortInUse, "spec.apiServerEndpoint", n,
						fmt.Sprintf("give the API of one cluster another port (cluster %s listens on it on %s)", on, n),
						"port %d on %s is used by cluster %s too", p, n, on)
				}
			}
			if c.Spec.HighAvailability.Enabled && o.Spec.HighAvailability.Enabled && c.Spec.IsControlPlane(n) && o.Spec.IsControlPlane(n) &&
				mine.VirtualRouterID == theirs.VirtualRouterID {
				b.block(CodeRouterIDInUse, "spec.highAvailability", n, "keep one of the clusters' control planes off "+n,
					"keepalived of cluster %s uses virtual_router_id %d on %s too", on, mine.VirtualRouterID, n)
			}
		}
		if mineRender == nil {
			mineRender = b.quietRender(c, status)
		}
		b.checkClaims(on, nodes, mineRender, b.quietRender(o, ost))
	}
}

// sharedMachines are the members of c that are members of o too, sorted.
func sharedMachines(c, o *api.KubernetesCluster) []string {
	var out []string
	for _, m := range c.Spec.Members() {
		if isMember(o, m.NodeID) && !slices.Contains(out, m.NodeID) {
			out = append(out, m.NodeID)
		}
	}
	slices.Sort(out)
	return out
}

// portsOn are the ports cluster c with layout l listens on on node n.
func portsOn(c *api.KubernetesCluster, l render.Layout, n string) []int {
	if !c.Spec.IsControlPlane(n) {
		return []int{l.KubeletHealthzPort, l.KubeProxyHealthzPort}
	}
	out := l.Ports()
	if _, p, err := net.SplitHostPort(c.Spec.APIServerEndpoint); err == nil {
		if port, err := strconv.Atoi(p); err == nil {
			out = append(out, port)
		}
	}
	return out
}

// checkCIDRs blocks pod and service ranges of c that overlap o's on a
// machine both use: routes and service rules would capture each other's
// traffic.
func (b *builder) checkCIDRs(c, o *api.KubernetesCluster) {
	ranges := func(k *api.KubernetesCluster) map[string]string {
		return map[string]string{"spec.clusterCidr": k.Spec.ClusterCIDR, "spec.serviceCidr": k.Spec.ServiceCIDR}
	}
	for _, path := range []string{"spec.clusterCidr", "spec.serviceCidr"} {
		_, mine, err := net.ParseCIDR(ranges(c)[path])
		if err != nil {
			continue
		}
		for _, op := range []string{"spec.clusterCidr", "spec.serviceCidr"} {
			_, theirs, err := net.ParseCIDR(ranges(o)[op])
			if err == nil && (mine.Contains(theirs.IP) || theirs.Contains(mine.IP)) {
				b.block(CodeCIDROverlap, path, "",
					fmt.Sprintf("pick a range that overlaps none of cluster %s's (%s, %s)", o.Metadata.Name, o.Spec.ClusterCIDR, o.Spec.ServiceCIDR),
					"%s %s overlaps %s's %s %s on machines both clusters use", lastSegment(path), mine, o.Metadata.Name, lastSegment(op), theirs)
			}
		}
	}
}

// quietRender renders c with status for a comparison; a cluster that
// cannot be rendered gives nothing (its own plan says why).
func (b *builder) quietRender(c *api.KubernetesCluster, status api.ClusterStatus) map[string]*api.NodeState {
	rc := *c
	rc.Status = status
	sec, err := pki.Placeholder(&rc)
	if err != nil {
		return nil
	}
	opts := b.env.opts
	opts.UnreportedPool = UnreportedPool
	opts.EtcdClusterExists = true
	opts.EtcdRestoreSnapshot = nil
	out, err := render.Render(&rc, sec, b.env.nodes, opts)
	if err != nil {
		return nil
	}
	return out
}

// checkClaims blocks a file path, unit, task or volume both renders put on
// a machine they share.
func (b *builder) checkClaims(other string, nodes []string, mine, theirs map[string]*api.NodeState) {
	for _, n := range nodes {
		a, o := mine[n], theirs[n]
		if a == nil || o == nil {
			continue
		}
		taken := map[string]string{}
		for _, f := range o.Files {
			taken["file "+f.Path] = f.Path
		}
		for _, v := range o.Volumes {
			taken["volume "+v.Name] = v.Name
			if v.MountPath != "" {
				taken["mount "+v.MountPath] = v.MountPath
			}
		}
		for _, u := range o.Units {
			taken["unit "+u.Name] = u.Name
		}
		for _, t := range o.Tasks {
			taken["unit "+t.Name] = t.Name
		}
		var clash []string
		for _, f := range a.Files {
			clash = appendTaken(clash, taken, "file "+f.Path)
		}
		for _, v := range a.Volumes {
			clash = appendTaken(clash, taken, "volume "+v.Name)
			if v.MountPath != "" {
				clash = appendTaken(clash, taken, "mount "+v.MountPath)
			}
		}
		for _, u := range a.Units {
			clash = appendTaken(clash, taken, "unit "+u.Name)
		}
		for _, t := range a.Tasks {
			clash = appendTaken(clash, taken, "unit "+t.Name)
		}
		for _, what := range clash {
			b.block(CodePathInUse, "", n,
				fmt.Sprintf("change the path or name in this manifest; cluster %s owns it on %s", other, n),
				"%s on %s belongs to cluster %s too", what, n, other)
		}
	}
}

func appendTaken(out []string, taken map[string]string, key string) []string {
	if _, ok := taken[key]; ok {
		return append(out, key)
	}
	return out
}
