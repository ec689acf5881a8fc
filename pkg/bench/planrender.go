package bench

import (
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
)

// Size of the plan and render figure's cluster.
const (
	sizeControlPlanes = 5
	sizeWorkers       = 95
	sizeVolumes       = 200
)

// bigCluster returns a defaulted, valid cluster of 5 control planes, 95
// workers and 200 volumes, and the nodes' facts.
func bigCluster() (*api.KubernetesCluster, []*api.Node, error) {
	c := &api.KubernetesCluster{
		Kind:     api.KindKubernetesCluster,
		Metadata: api.ObjectMeta{Name: "big"},
		Spec: api.ClusterSpec{
			ClusterCIDR:       "10.244.0.0/16",
			ServiceCIDR:       "10.96.0.0/12",
			APIServerEndpoint: "10.0.1.250:6443",
			HighAvailability:  api.HASpec{Enabled: true, VIPAddress: "10.0.1.250", VIPInterface: "enp6s0"},
			LocalProvisioner:  api.LocalProvisionerSpec{Enabled: true},
		},
	}
	var nodes []*api.Node
	for i := range sizeControlPlanes + sizeWorkers {
		id := fmt.Sprintf("node-%03d", i+1)
		n := api.ClusterNode{NodeID: id, AdvertiseAddress: fmt.Sprintf("10.0.1.%d", i+1)}
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
				Interfaces: []api.Interface{{Name: "enp6s0", Up: true, Addresses: []string{n.AdvertiseAddress + "/24"}}},
				Storage:    []api.StorageBackend{{Class: api.StorageClassLVM, Name: "vg_kcore", SizeBytes: 4 << 40, FreeBytes: 4 << 40}},
			},
			Status: api.NodeHealth{Ready: true},
		})
	}
	for v := range sizeVolumes {
		c.Spec.LocalProvisioner.Volumes = append(c.Spec.LocalProvisioner.Volumes, api.VolumeSpec{
			Name:         fmt.Sprintf("data-%d", v/(sizeControlPlanes+sizeWorkers)),
			NodeID:       fmt.Sprintf("node-%03d", v%(sizeControlPlanes+sizeWorkers)+1),
			StorageClass: api.StorageClassLVM,
			SizeBytes:    10 << 30,
		})
	}
	c.Default()
	if errs := c.Validate().Errors(); len(errs) > 0 {
		return nil, nil, fmt.Errorf("build the 100-node cluster: %v", errs)
	}
	return c, nodes, nil
}

// planRenderFigures times plan.Compute (a create of the 100-node cluster)
// and render.Render (every NodeState) iterations times each.
func planRenderFigures(iterations int) ([]Figure, error) {
	c, nodes, err := bigCluster()
	if err != nil {
		return nil, err
	}
	secrets, err := pki.IssueClusterSecrets(c, time.Now())
	if err != nil {
		return nil, fmt.Errorf("issue the 100-node cluster's secrets: %w", err)
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
			return nil, fmt.Errorf("render the 100-node cluster: %w", err)
		}
		renderMs = append(renderMs, ms(time.Since(start)))
		states = len(out)
	}
	note := fmt.Sprintf("%d control planes, %d workers, %d volumes; median of %d iterations in one process", sizeControlPlanes, sizeWorkers, sizeVolumes, iterations)
	pf := measured("4", "plan.Compute, 100 nodes", "ms", planMs).withNote(note).withNote(shape)
	rf := measured("4", "render.Render, every NodeState", "ms", renderMs).withNote(note).withNote(fmt.Sprintf("%d NodeStates", states))
	return []Figure{
		pf.withTarget("< 100 ms", *pf.Value < 100),
		rf.withTarget("< 100 ms", *rf.Value < 100),
	}, nil
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
