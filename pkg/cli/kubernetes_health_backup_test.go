package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/tests/harness"
)

// TestHealthShowsFailedScheduledBackup runs a real in-process controller
// whose cluster schedules etcd backups while no etcd listens on its control
// plane: kctl kubernetes health lists the EtcdBackup check as not ok with
// the member tried, and kctl kubernetes get prints the condition.
func TestHealthShowsFailedScheduledBackup(t *testing.T) {
	e := newKctlEnv(t)
	pkiDir := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443", "--out", pkiDir)
	ctx, cancel := context.WithCancel(context.Background())
	ctl, err := controller.Start(ctx, controller.Config{
		DataDir: filepath.Join(e.dir, "data"), Listen: "127.0.0.1:0", Bootstrap: true,
		PKIDir: filepath.Join(pkiDir, "controller-0"), FastTimeouts: true,
		BackupCheckInterval: 100 * time.Millisecond,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := ctl.Close(); err != nil {
			t.Errorf("close controller: %v", err)
		}
	})
	setControllers(t, e, ctl.HTTPAddr())
	// Nothing listens on 127.0.0.93:2379: the snapshot's connection is refused.
	lab := api.KubernetesCluster{APIVersion: api.APIVersion, Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: "lab"},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", APIServerEndpoint: "127.0.0.93:6444", ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "cp1", AdvertiseAddress: "127.0.0.93"}},
			EtcdBackup:        &api.EtcdBackupSpec{Interval: "1h"},
		}}
	lab.Default()
	storeThroughRaft(t, ctl, api.KindKubernetesCluster, "lab", lab)

	var out string
	if err := harness.Poll(30*time.Second, func() error {
		var err error
		out, _, err = e.run("kubernetes", "health", "lab")
		var exit *ExitError
		if err != nil && !errors.As(err, &exit) {
			return err
		}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 3 && f[2] == "EtcdBackup" {
				if f[3] == "False" && strings.Contains(l, "BackupFailed") && strings.Contains(l, "cp1: ") {
					return nil
				}
			}
		}
		return fmt.Errorf("no failed EtcdBackup check naming cp1 in:\n%s", out)
	}); err != nil {
		t.Fatal(err)
	}
	got := e.must("kubernetes", "get", "lab")
	if !strings.Contains(got, "EtcdBackup=False BackupFailed no scheduled backup yet; the backup at ") || !strings.Contains(got, "cp1: ") {
		t.Fatalf("kubernetes get does not show the failed backup:\n%s", got)
	}
}
