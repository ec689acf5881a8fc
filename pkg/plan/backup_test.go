package plan

import (
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// TestEtcdBackupChangeIsAnUpdateWithNoSteps: adding spec.etcdBackup to a
// running cluster is an update (so apply stores it) that shows the fields
// and touches no node; removing it again is one too.
func TestEtcdBackupChangeIsAnUpdateWithNoSteps(t *testing.T) {
	withBackup := with(labCluster(), func(c *api.KubernetesCluster) {
		c.Spec.EtcdBackup = &api.EtcdBackupSpec{Interval: "1h", Keep: 3}
	})
	p := Compute(Input{Desired: clusters(withBackup), Stored: clusters(stored(labCluster(), api.PhaseReady)), Nodes: labNodes()})
	if len(p.Blocking) > 0 || len(p.Clusters) != 1 || p.Clusters[0].Action != ActionUpdate {
		t.Fatalf("plan: %+v", p)
	}
	if n := len(p.Clusters[0].Steps); n != 0 {
		t.Fatalf("%d steps, want none: a backup schedule touches no node", n)
	}
	want := map[string]string{"spec.etcdBackup.interval": "1h", "spec.etcdBackup.keep": "3", "spec.etcdBackup.target": api.BackupTargetController}
	for _, d := range p.Clusters[0].Diff {
		if want[d.Path] == d.New && d.Old == "" {
			delete(want, d.Path)
		}
	}
	if len(want) > 0 {
		t.Fatalf("diff %+v misses %v", p.Clusters[0].Diff, want)
	}
	back := Compute(Input{Desired: clusters(labCluster()), Stored: clusters(stored(withBackup, api.PhaseReady)), Nodes: labNodes()})
	if len(back.Clusters) != 1 || back.Clusters[0].Action != ActionUpdate {
		t.Fatalf("removing etcdBackup: %+v", back)
	}
}
