package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRecovery runs, in order and on one lab whose cluster it applies
// itself, the scenarios in which the controllers or etcd lose what they
// had: the controller leader killed while the cluster bootstraps
// (leader_test.go), the quorum-loss drill restored from a snapshot kctl
// takes (restore_test.go), and the same from a scheduled backup exported
// to a file (backup_test.go). Each leaves the cluster ready for the next.
func TestRecovery(t *testing.T) {
	l := startLab(t, false)
	if _, err := os.Stat(filepath.Join(l.k8sBin, "etcdutl")); err != nil {
		t.Skipf("SKIP: %s is missing: rebuild the lab binaries with make k8s-bins", filepath.Join(l.k8sBin, "etcdutl"))
	}
	steps := []struct {
		name string
		run  func(*testing.T, *lab)
	}{
		{"leader-stopped-during-bootstrap", testLeaderStoppedDuringBootstrap},
		{"restore-from-snapshot", testRestore},
		{"scheduled-backup-restore", testScheduledBackupRestore},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, l) }) {
			return
		}
	}
}
