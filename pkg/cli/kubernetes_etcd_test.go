package cli

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/secrets"
)

// TestEtcdCommandsAgainstController runs the etcd commands against a real
// in-process controller: a snapshot of a cluster whose etcd does not answer
// is refused, stored snapshots are listed, restore shows its plan and needs
// a yes, and --wait reports a restore the orchestrator abandons because the
// snapshot cannot be opened (it was sealed under another key).
func TestEtcdCommandsAgainstController(t *testing.T) {
	e := newKctlEnv(t)
	pkiDir := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443", "--out", pkiDir)
	ctl := startController(t, e, filepath.Join(pkiDir, "controller-0"))
	x, err := e.load().Current()
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientFor(x)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Stored through raft directly: the plan would block on the node agent
	// that never registers here.
	lab := api.KubernetesCluster{APIVersion: api.APIVersion, Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: "lab"},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", APIServerEndpoint: "127.0.0.21:6444", ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "cp1", AdvertiseAddress: "127.0.0.21"}},
		}}
	lab.Default()
	storeThroughRaft(t, ctl, api.KindKubernetesCluster, "lab", lab)

	if out, _, err := e.run("kubernetes", "etcd", "snapshot", "lab"); err == nil || !strings.Contains(err.Error(), "take etcd snapshot of lab") {
		t.Fatalf("snapshot with no etcd answering = %v\n%s", err, out)
	}

	other, err := secrets.New([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	name := "lab/20261130T000736Z-manual"
	sealed, err := other.Seal(apiv1.KindEtcdSnapshot, name, []byte("not for this controller"))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := json.Marshal(etcdsnap.Stored{EtcdSnapshotInfo: apiv1.EtcdSnapshotInfo{
		Name: name, Cluster: "lab", TakenAt: "2026-11-30T00:07:36Z", Reason: "manual", Member: "cp1",
		SizeBytes: 364544, StoredBytes: 40000, SHA256: "00", Revision: 315,
	}, Content: sealed})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(t.Context(), apiv1.KindEtcdSnapshot, name, json.RawMessage(stored), nil); err != nil {
		t.Fatal(err)
	}

	list := e.must("kubernetes", "etcd", "snapshots", "lab")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[1], name) || !strings.Contains(lines[1], "356.0 KiB") || !strings.HasSuffix(lines[1], "315") {
		t.Fatalf("snapshots:\n%s", list)
	}

	out, _, err := e.run("kubernetes", "etcd", "restore", "lab", "--from", "20261130T000736Z-manual")
	if !errors.Is(err, ErrNotConfirmed) || !strings.Contains(out, "Every write to the cluster after 2026-11-30T00:07:36Z is lost.") || !strings.Contains(out, "stop etcd on every control plane: cp1") {
		t.Fatalf("restore without a terminal = %v\n%s", err, out)
	}
	if out, _, err := e.run("kubernetes", "etcd", "restore", "lab", "--from", "nope"); err == nil || !strings.Contains(err.Error(), `no etcd snapshot "nope"`) {
		t.Fatalf("restore of an unknown snapshot = %v\n%s", err, out)
	}
	out, _, err = e.run("kubernetes", "etcd", "restore", "lab", "--from", name, "--yes", "--wait", "--timeout", "1m")
	var exit *ExitError
	if !errors.As(err, &exit) || !strings.Contains(err.Error(), "abandoned") || !strings.Contains(out, "recorded (generation 1)") {
		t.Fatalf("restore of an unreadable snapshot = %v\n%s", err, out)
	}
}
