package render

import (
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// TestEtcdBackupUnitOnControlPlanes: with spec.etcdBackup.target nodes every
// control plane, and no worker, runs the backup command against its own
// etcd member after it; a certificate renewal does not restart it, the
// unit of a cluster in another slot has that slot's name and port, and an
// agent with --root gets the backup directory under it.
func TestEtcdBackupUnitOnControlPlanes(t *testing.T) {
	c := loadCluster(t, "lab")
	c.Spec.EtcdBackup = &api.EtcdBackupSpec{Target: api.BackupTargetNodes, Interval: "30m", Keep: 5, MaxAge: "24h"}
	c.Default()
	states, err := Render(c, fakeSecrets(c), testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := EtcdBackupArgs{
		Cluster: c.Metadata.Name, Endpoint: "https://127.0.0.1:2379",
		CACert: PKIDir + "/etcd/ca.crt", Cert: PKIDir + "/apiserver-etcd-client.crt", Key: PKIDir + "/apiserver-etcd-client.key",
		Dir: api.DefaultNodeBackupPath, Interval: c.Spec.EtcdBackup.IntervalDuration(), Keep: 5, MaxAge: c.Spec.EtcdBackup.MaxAgeDuration(),
	}.Argv()
	if !slices.Contains(want, "--max-age=24h0m0s") || want[0] != AgentBinary || want[1] != EtcdBackupCommand {
		t.Fatalf("argv %v", want)
	}
	for _, m := range c.Spec.Members() {
		u := unitByName(states[m.NodeID], UnitEtcdBackup)
		if !c.Spec.IsControlPlane(m.NodeID) {
			if u != nil {
				t.Errorf("worker %s runs %s", m.NodeID, UnitEtcdBackup)
			}
			continue
		}
		if u == nil {
			t.Fatalf("%s: no %s", m.NodeID, UnitEtcdBackup)
		}
		if !slices.Equal(u.Argv, want) || !slices.Equal(u.After, []string{UnitEtcd}) || u.Restart != api.RestartAlways {
			t.Errorf("%s: unit %+v", m.NodeID, u)
		}
		rebased := Rebase(states[m.NodeID], "/tmp/lab/n1")
		if got := unitByName(rebased, UnitEtcdBackup).Argv; !slices.Contains(got, "--dir=/tmp/lab/n1"+api.DefaultNodeBackupPath) {
			t.Errorf("%s: rebased argv %v", m.NodeID, got)
		}
	}

	// A renewed client certificate keeps the unit's hash.
	renewed := fakeSecrets(c)
	for id, cp := range renewed.ControlPlanes {
		cp.APIServerEtcdClient.KeyPEM = append([]byte(nil), cp.APIServerEtcdClient.KeyPEM...)
		cp.APIServerEtcdClient.KeyPEM = append(cp.APIServerEtcdClient.KeyPEM, '\n')
		renewed.ControlPlanes[id] = cp
	}
	again, err := Render(c, renewed, testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := c.Spec.ControlPlaneNodes[0].NodeID
	if a, b := unitByName(states[id], UnitEtcdBackup).InputHash, unitByName(again[id], UnitEtcdBackup).InputHash; a != b {
		t.Errorf("a renewed etcd client key restarts the backup unit (%s → %s)", a, b)
	}

	c.Status.Slot = 2
	slotted, err := Render(c, fakeSecrets(c), testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := ClusterLayout(c)
	u := unitByName(slotted[id], l.UnitEtcdBackup)
	if u == nil || l.UnitEtcdBackup == UnitEtcdBackup || !slices.Contains(u.Argv, "--endpoint=https://127.0.0.1:2579") ||
		!strings.HasPrefix(u.Argv[4], "--"+EtcdBackupFlagCACert+"="+l.PKIDir) {
		t.Errorf("slot 2 unit %s: %+v", l.UnitEtcdBackup, u)
	}

	c.Spec.EtcdBackup.Target = api.BackupTargetController
	c.Spec.EtcdBackup.NodePath = ""
	ctl, err := Render(c, fakeSecrets(c), testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if unitByName(ctl[id], l.UnitEtcdBackup) != nil {
		t.Error("backups kept on the controller render a node unit")
	}
}
