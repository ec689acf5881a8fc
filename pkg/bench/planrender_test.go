package bench

import (
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// Every size figure 4 measures is a valid cluster whose create plan has
// no blocking issue, so the figure times a plan that would be applied.
func TestBigClusterPlansCleanlyAtEverySize(t *testing.T) {
	for _, size := range planSizes {
		c, nodes, err := bigCluster(size)
		if err != nil {
			t.Fatalf("%d nodes: %v", size, err)
		}
		if got := len(c.Spec.Members()); got != size {
			t.Errorf("%d nodes: the cluster has %d members", size, got)
		}
		p := plan.Compute(plan.Input{Desired: []*api.KubernetesCluster{c}, Nodes: nodes, Index: 1})
		if len(p.Blocking) > 0 || len(p.Warnings) > 0 {
			t.Errorf("%d nodes: %s: %v %v", size, planShape(p), p.Blocking, p.Warnings)
		}
	}
}
