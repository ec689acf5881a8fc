package bench

import (
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
)

// Shape of the plan and render figure's clusters: 5 control planes, the
// rest workers, volumesPerNode volumes per node; sizes are the node counts
// measured, smallest first.
const (
	sizeControlPlanes = 5
	volumesPerNode    = 2
)

// planSizes are figure 4's cluster sizes; the larger is set against the
// smaller scaled linearly.
var planSizes = []int{100, 1000}

// bigCluster returns a defaulted, valid cluster of size nodes (5 control
// planes, the rest workers) with 2 volumes per node, and the nodes' facts.
// Nodes share one /16; pods get a /24 each from a /12.
func bigCluster(size int) (*api.KubernetesCluster, []*api.Node, error) {
	c := &api.KubernetesCluster{
		Kind:     api.KindKubernetesCluster,
		Metadata: api.ObjectMeta{Name: "big"},
		Spec: api.ClusterSpec{
			ClusterCIDR:       "10.240.0.0/12",
			ServiceCIDR:       "10.96.0.0/12",
			APIServerEndpoint: "10.0.255.250:6443",
			HighAvailability:  api.HASpec{Enabled: true, VIPAddress: "10.0.255.250", VIPInterface: "enp6s0"},
			LocalProvisioner:  api.LocalProvisionerSpec{Enabled: true},
		},
	}
	var nodes []*api.Node
	for i := range size {
		id := fmt.Sprintf("node-%04d", i+1)
		n := api.ClusterNode{NodeID: id, AdvertiseAddress: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)}
		if i < sizeControlPlanes {
			c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes, n)
		} else {
			c.Spec.WorkerNodes = append(c.Spec.WorkerNodes, n)
		}
		nodes = append(nodes, &api.Node{
			APIVersion: api.APIVersion, Kind: api.KindNode, Metadata: api.ObjectMeta{Name: id},
			Facts: api.NodeFacts{
				Hostname:   id,
				Addresses:  []string{n.AdvertiseAddress},
				Interfaces: []api.Interface{{Name: "enp6s0", Up: true, Addresses: []string{n.AdvertiseAddress + "/16"}}},
				Storage:    []api.StorageBackend{{Class: api.StorageClassLVM, Name: "vg_kcore", SizeBytes: 4 << 40, FreeBytes: 4 << 40}},
			},
			Status: api.NodeHealth{Ready: true},
		})
	}
	for v := range size * volumesPerNode {
		c.Spec.LocalProvisioner.Volumes = append(c.Spec.LocalProvisioner.Volumes, api.VolumeSpec{
			Name:         fmt.Sprintf("data-%d", v/size),
			NodeID:       fmt.Sprintf("node-%04d", v%size+1),
			StorageClass: api.StorageClassLVM,
			SizeBytes:    10 << 30,
		})
	}
	c.Default()
	if errs := c.Validate().Errors(); len(errs) > 0 {
		return nil, nil, fmt.Errorf("build the %d-node cluster: %v", size, errs)
	}
	return c, nodes, nil
}

// planRenderFigures times plan.Compute (a create of the cluster) and
// render.Render (every NodeState) iterations times each at every size of
// planSizes; the larger sizes are set against the smallest, scaled
// linearly.
func planRenderFigures(iterations int) ([]Figure, error) {
	var out []Figure
	var basePlan, baseRender float64
	for _, size := range planSizes {
		pf, rf, err := planRenderAt(size, iterations)
		if err != nil {
			return nil, err
		}
		if size == planSizes[0] {
			basePlan, baseRender = *pf.Value, *rf.Value
			pf = pf.withTarget("< 100 ms", *pf.Value < 100)
			rf = rf.withTarget("< 100 ms", *rf.Value < 100)
		} else {
			scale := float64(size) / float64(planSizes[0])
			ref := fmt.Sprintf("%d nodes' × %s (linear), same run", planSizes[0], num(scale))
			pf = pf.withReference(ref, basePlan*scale)
			pf = pf.withTarget("ratio <= 1 (no worse than linear)", pf.Ratio != nil && *pf.Ratio <= 1)
			rf = rf.withReference(ref, baseRender*scale)
			rf = rf.withTarget("ratio <= 1 (no worse than linear)", rf.Ratio != nil && *rf.Ratio <= 1)
		}
		out = append(out, pf, rf)
	}
	return out, nil
}

// planRenderAt times plan and render of one size's cluster.
func planRenderAt(size, iterations int) (Figure, Figure, error) {
	c, nodes, err := bigCluster(size)
	if err != nil {
		return Figure{}, Figure{}, err
	}
	secrets, err := pki.IssueClusterSecrets(c, time.Now())
	if err != nil {
		return Figure{}, Figure{}, fmt.Errorf("issue the %d-node cluster's secrets: %w", size, err)
	}
	facts := map[string]*api.Node{}
	for _, n := range nodes {
		facts[n.Metadata.Name] = n
	}
	var planMs, renderMs []float64
	var shape string
	var states int
	for range iterations {
		start := time.Now()
		p := plan.Compute(plan.Input{Desired: []*api.KubernetesCluster{c}, Nodes: nodes, Index: 1})
		planMs = append(planMs, ms(time.Since(start)))
		shape = planShape(p)
		start = time.Now()
		out, err := render.Render(c, secrets, facts, render.Options{})
		if err != nil {
			return Figure{}, Figure{}, fmt.Errorf("render the %d-node cluster: %w", size, err)
		}
		renderMs = append(renderMs, ms(time.Since(start)))
		states = len(out)
	}
	note := fmt.Sprintf("%d control planes, %d workers, %d volumes; median of %d iterations in one process", sizeControlPlanes, size-sizeControlPlanes, size*volumesPerNode, iterations)
	pf := measured("4", fmt.Sprintf("plan.Compute, %s nodes", thousands(size)), "ms", planMs).withNote(note).withNote(shape)
	rf := measured("4", fmt.Sprintf("render.Render, %s nodes (every NodeState)", thousands(size)), "ms", renderMs).withNote(note).withNote(fmt.Sprintf("%d NodeStates", states))
	return pf, rf, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// planShape says what a plan holds, for the figure's note.
func planShape(p *plan.Plan) string {
	steps := 0
	action := ""
	for _, c := range p.Clusters {
		steps += len(c.Steps)
		action = c.Action
	}
	return fmt.Sprintf("plan: %s, %d steps, %d blocking issues, %d warnings", action, steps, len(p.Blocking), len(p.Warnings))
}
