package plan

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// Bounds of the generative test.
const (
	// generativePairs is how many (stored, desired) pairs are planned.
	generativePairs = 300
	// generativeSeed is the first pair's seed; pair i uses generativeSeed+i.
	generativeSeed = 20261201
	// generativeMinChecked is how many pairs must be unblocked, so the
	// property is not vacuously true.
	generativeMinChecked = generativePairs / 2
)

// TestPlanIsTheRenderedDiff plans many random valid changes of a cluster
// (membership, volumes, HA, cluster DNS, endpoint, Cilium,
// scheduleOnControlPlane) and checks, against its own comparison of the two
// renders, that every file, unit, task and volume that differs appears in
// a step and that every step stands for a rendered difference.
func TestPlanIsTheRenderedDiff(t *testing.T) {
	checked := 0
	for i := range generativePairs {
		seed := uint64(generativeSeed + i)
		r := rand.New(rand.NewPCG(seed, seed))
		in := randomChange(r)
		p := Compute(in)
		if p.Blocked() {
			continue
		}
		checked++
		if err := checkRenderedDiff(in, p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	t.Logf("%d of %d random changes were unblocked and checked", checked, generativePairs)
	if checked < generativeMinChecked {
		t.Fatalf("only %d of %d random changes were unblocked; the generator makes too few valid changes", checked, generativePairs)
	}
}

func checkRenderedDiff(in Input, p *Plan) error {
	if len(p.Clusters) != 1 {
		return fmt.Errorf("plan has %d clusters", len(p.Clusters))
	}
	cp := p.Clusters[0]
	old := in.Stored[0]
	cur := cp.Desired
	if cp.Action == ActionNoOp {
		cur = old
	}
	want, err := renderedDifferences(old, cur, in.Nodes)
	if err != nil {
		return err
	}
	got := map[string]bool{}
	for _, s := range cp.Steps {
		if len(s.Changes) == 0 {
			if (s.Action == StepDrain || s.Component == ComponentMembership) && !isMember(cur, s.Node) {
				continue
			}
			return fmt.Errorf("step %s %s %s on %s stands for no rendered change", s.Component, s.Action, s.Detail, s.Node)
		}
		for _, it := range s.Changes {
			k := s.Node + " " + it.Kind + " " + it.Name
			if !want[k] {
				return fmt.Errorf("step %s %s on %s lists %s %s (%s), which the renders do not change", s.Component, s.Action, s.Node, it.Kind, it.Name, it.Change)
			}
			if got[k] {
				return fmt.Errorf("%s appears in two steps", k)
			}
			got[k] = true
		}
	}
	for k := range want {
		if !got[k] {
			return fmt.Errorf("the renders differ in %s, but no step shows it (diff %v)", k, cp.Diff)
		}
	}
	return nil
}

// renderedDifferences renders both clusters as a plan does and lists every
// "node kind name" whose item is present in one render only or differs,
// comparing items as agents receive them (JSON).
func renderedDifferences(old, cur *api.KubernetesCluster, nodes []*api.Node) (map[string]bool, error) {
	facts := map[string]*api.Node{}
	for _, n := range nodes {
		facts[n.Metadata.Name] = n
	}
	renderOne := func(c *api.KubernetesCluster) (map[string]*api.NodeState, error) {
		rc := *c
		rc.Status = old.Status
		sec, err := pki.Placeholder(&rc)
		if err != nil {
			return nil, err
		}
		return render.Render(&rc, sec, facts, render.Options{UnreportedPool: UnreportedPool, EtcdClusterExists: true})
	}
	a, err := renderOne(old)
	if err != nil {
		return nil, fmt.Errorf("render stored: %w", err)
	}
	b, err := renderOne(cur)
	if err != nil {
		return nil, fmt.Errorf("render desired: %w", err)
	}
	out := map[string]bool{}
	for _, id := range unionNodeIDs(a, b) {
		for k, v := range itemsOf(a[id]) {
			if w, ok := itemsOf(b[id])[k]; !ok || w != v {
				out[id+" "+k] = true
			}
		}
		for k := range itemsOf(b[id]) {
			if _, ok := itemsOf(a[id])[k]; !ok {
				out[id+" "+k] = true
			}
		}
	}
	return out, nil
}

func unionNodeIDs(a, b map[string]*api.NodeState) []string {
	var ids []string
	for _, m := range []map[string]*api.NodeState{a, b} {
		for id := range m {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// itemsOf maps "kind name" to the item's JSON.
func itemsOf(ns *api.NodeState) map[string]string {
	out := map[string]string{}
	if ns == nil {
		return out
	}
	put := func(kind, name string, v any) {
		b, _ := json.Marshal(v)
		out[kind+" "+name] = string(b)
	}
	for _, f := range ns.Files {
		put(KindFile, f.Path, f)
	}
	for _, u := range ns.Units {
		put(KindUnit, u.Name, u)
	}
	for _, tk := range ns.Tasks {
		put(KindTask, tk.Name, tk)
	}
	for _, v := range ns.Volumes {
		put(KindVolume, v.Name, v)
	}
	return out
}

// generativePool are the registered nodes random clusters are made of.
func generativePool() []*api.Node {
	return append(allNodes(), node("node-111", "192.168.40.111"))
}

func addrOf(id string) string { return "192.168.40." + id[len("node-"):] }

// randomCluster is a valid random cluster over the pool.
func randomCluster(r *rand.Rand) *api.KubernetesCluster {
	ids := []string{"node-103", "node-104", "node-105", "node-107", "node-109", "node-111"}
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	cps, workers := 1+r.IntN(3), r.IntN(3)
	c := labCluster()
	c.Spec.ControlPlaneNodes, c.Spec.WorkerNodes = nil, nil
	for i, id := range ids[:cps+workers] {
		n := api.ClusterNode{NodeID: id, AdvertiseAddress: addrOf(id), Iface: "enp6s0"}
		if i < cps {
			c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes, n)
		} else {
			c.Spec.WorkerNodes = append(c.Spec.WorkerNodes, n)
		}
	}
	setHA(c, r.IntN(2) == 0, r)
	c.Spec.ClusterDNS = randomDNS(r)
	randomCilium(c, r)
	c.Spec.ScheduleOnControlPlane = r.IntN(2) == 0
	c.Spec.LocalProvisioner.Volumes = nil
	for _, m := range c.Spec.Members() {
		if r.IntN(2) == 0 {
			c.Spec.LocalProvisioner.Volumes = append(c.Spec.LocalProvisioner.Volumes, randomVolume(r, m.NodeID))
		}
	}
	return c
}

func setHA(c *api.KubernetesCluster, on bool, r *rand.Rand) {
	if on {
		vip := fmt.Sprintf("192.168.40.%d", 200+r.IntN(4))
		c.Spec.HighAvailability = api.HASpec{Enabled: true, VIPAddress: vip, VIPInterface: "enp6s0", HealthCheck: ptrTo(r.IntN(2) == 0)}
		c.Spec.APIServerEndpoint = vip + ":6443"
		return
	}
	c.Spec.HighAvailability = api.HASpec{}
	cps := c.Spec.ControlPlaneNodes
	c.Spec.APIServerEndpoint = cps[r.IntN(len(cps))].AdvertiseAddress + ":6443"
}

func randomDNS(r *rand.Rand) string {
	return []string{"10.96.0.10", "10.96.0.11", "10.96.0.53"}[r.IntN(3)]
}

func randomCilium(c *api.KubernetesCluster, r *rand.Rand) {
	c.Spec.Cilium.MTU = []int{1500, 9000}[r.IntN(2)]
	c.Spec.Cilium.LoadBalancerIPPools = [][]string{nil, {"192.168.40.224/29"}, {"192.168.40.224/29", "192.168.40.232/29"}}[r.IntN(3)]
}

func randomVolume(r *rand.Rand, id string) api.VolumeSpec {
	v := api.VolumeSpec{Name: "kcore-kdata", NodeID: id, StorageClass: "lvm", SizeBytes: int64(10+r.IntN(40)) * gib, FSType: "ext4"}
	if r.IntN(3) == 0 {
		v.MountPath = "/srv/kdata"
	}
	return v
}

// randomChange is a stored random cluster and either a manifest with one
// to three in-place edits or a scale request.
func randomChange(r *rand.Rand) Input {
	old := randomCluster(r)
	in := Input{Stored: []*api.KubernetesCluster{stored(old, api.PhaseReady)}, Nodes: generativePool(), Index: 42}
	if r.IntN(4) == 0 {
		in.Scale = randomScale(r, old)
		return in
	}
	cur := randomCluster(r)
	*cur = *old
	cur.Spec = cloneSpec(old.Spec)
	cur.Status = api.ClusterStatus{}
	for range 1 + r.IntN(3) {
		randomEdit(r, cur)
	}
	in.Desired = []*api.KubernetesCluster{cur}
	return in
}

func randomEdit(r *rand.Rand, c *api.KubernetesCluster) {
	vols := c.Spec.LocalProvisioner.Volumes
	switch r.IntN(9) {
	case 0:
		c.Spec.ClusterDNS = randomDNS(r)
	case 1:
		setHA(c, !c.Spec.HighAvailability.Enabled, r)
	case 2:
		setHA(c, c.Spec.HighAvailability.Enabled, r)
	case 3:
		randomCilium(c, r)
	case 4:
		c.Spec.ScheduleOnControlPlane = !c.Spec.ScheduleOnControlPlane
	case 5:
		if len(vols) > 0 {
			vols[r.IntN(len(vols))].SizeBytes += int64(1+r.IntN(10)) * gib
		}
	case 6:
		if len(vols) > 0 {
			i := r.IntN(len(vols))
			vols[i].MountPath = []string{"", "/srv/kdata", "/srv/other"}[r.IntN(3)]
		}
	case 7:
		if len(vols) > 0 {
			i := r.IntN(len(vols))
			c.Spec.LocalProvisioner.Volumes = slices.Delete(slices.Clone(vols), i, i+1)
		}
	default:
		for _, m := range c.Spec.Members() {
			if !slices.ContainsFunc(vols, func(v api.VolumeSpec) bool { return v.NodeID == m.NodeID }) {
				c.Spec.LocalProvisioner.Volumes = append(slices.Clone(vols), randomVolume(r, m.NodeID))
				return
			}
		}
	}
}

// randomScale adds an unused node as a control plane or a worker, or
// removes a member.
func randomScale(r *rand.Rand, c *api.KubernetesCluster) *ScaleRequest {
	req := &ScaleRequest{Cluster: c.Metadata.Name}
	var free []string
	for _, n := range generativePool() {
		if !isMember(c, n.Metadata.Name) {
			free = append(free, n.Metadata.Name)
		}
	}
	members := c.Spec.Members()
	switch {
	case len(free) > 0 && r.IntN(3) > 0:
		id := free[r.IntN(len(free))]
		n := api.ClusterNode{NodeID: id, AdvertiseAddress: addrOf(id), Iface: "enp6s0"}
		if r.IntN(2) == 0 {
			req.AddControlPlanes = []api.ClusterNode{n}
		} else {
			req.AddWorkers = []api.ClusterNode{n}
		}
	case len(members) > 1:
		req.Remove = []string{members[1+r.IntN(len(members)-1)].NodeID}
	default:
		req.AddWorkers = []api.ClusterNode{{NodeID: free[0], AdvertiseAddress: addrOf(free[0]), Iface: "enp6s0"}}
	}
	return req
}
