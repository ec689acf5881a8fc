package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/tests/harness"
)

// snapshotReplicas are three in-process controller replicas holding an
// imported snapshot of cluster lab, a file on the leader.
type snapshotReplicas struct {
	e        *kctlEnv
	ctls     []*controller.Controller
	leader   *controller.Controller
	follower *controller.Controller
	dirOf    map[*controller.Controller]string
	info     apiv1.EtcdSnapshotInfo
}

// newSnapshotReplicas starts the replicas, each copying the snapshot files
// it lacks every copyEvery (negative: never), and imports a snapshot.
func newSnapshotReplicas(t *testing.T, copyEvery time.Duration) *snapshotReplicas {
	t.Helper()
	e := newKctlEnv(t)
	pkiDir := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443,127.0.0.1:7444,127.0.0.1:7445", "--out", pkiDir)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := &snapshotReplicas{e: e, dirOf: map[*controller.Controller]string{}}
	for i := range 3 {
		cfg := controller.Config{
			DataDir: filepath.Join(e.dir, fmt.Sprintf("data-%d", i)), Listen: "127.0.0.1:0",
			PKIDir: filepath.Join(pkiDir, fmt.Sprintf("controller-%d", i)), FastTimeouts: true, Bootstrap: i == 0,
			SnapshotCopyInterval: copyEvery,
		}
		if i > 0 {
			cfg.Join = []string{r.ctls[0].HTTPAddr()}
		}
		c, err := controller.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		r.ctls = append(r.ctls, c)
		r.dirOf[c] = filepath.Join(cfg.DataDir, etcdsnap.DirName)
	}
	setControllers(t, e, r.ctls[0].HTTPAddr())
	pollMembers(t, e, func(rows [][]string) bool { return len(rows) == 3 && leaderOf(rows) != "" })
	for _, c := range r.ctls {
		if c.Node().IsLeader() {
			r.leader = c
		} else if r.follower == nil {
			r.follower = c
		}
	}
	if r.leader == nil || r.follower == nil {
		t.Fatal("no leader and follower")
	}
	lab := api.KubernetesCluster{APIVersion: api.APIVersion, Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: "lab"},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", APIServerEndpoint: "127.0.0.21:6444", ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "cp1", AdvertiseAddress: "127.0.0.21"}},
		}}
	lab.Default()
	storeThroughRaft(t, r.leader, api.KindKubernetesCluster, "lab", lab)
	src := filepath.Join(e.dir, "backup.db")
	writeEtcdDB(t, src, 11)
	if _, _, err := e.run("kubernetes", "etcd", "restore", "lab", "--from-file", src); !errors.Is(err, ErrNotConfirmed) {
		t.Fatalf("import = %v", err)
	}
	list, err := etcdsnap.List(r.leader.Node().State(), "lab")
	if err != nil || len(list) != 1 {
		t.Fatalf("snapshots %+v (%v)", list, err)
	}
	r.info = list[0]
	if len(r.info.Replicas) != 1 || r.info.Replicas[0] != r.leader.Node().ID() {
		t.Fatalf("holders %v, want the leader %s", r.info.Replicas, r.leader.Node().ID())
	}
	return r
}

// TestEtcdSnapshotFileFetchedFromHolder: with copies off, an imported
// snapshot is a file on the leader only, and a follower fetches it from
// the leader over the replicas' mutual TLS (the sealed file route), byte
// for byte the file the leader holds.
func TestEtcdSnapshotFileFetchedFromHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("three raft replicas: skipped with -short")
	}
	r := newSnapshotReplicas(t, -1)
	ctx, leader, follower, dirOf, info := context.Background(), r.leader, r.follower, r.dirOf, r.info
	// The follower sees the record but holds no file.
	if err := harness.Poll(30*time.Second, func() error {
		_, err := etcdsnap.Lookup(follower.Node().State(), info.Name)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	mine := &etcdsnap.Files{Dir: dirOf[follower]}
	if _, err := mine.ReadSealed(info.Name); !errors.Is(err, etcdsnap.ErrNotLocal) {
		t.Fatalf("the follower holds the file already: %v", err)
	}

	sealed, err := follower.Server().FetchEtcdSnapshot(ctx, info.Name, info.Replicas)
	if err != nil {
		t.Fatal(err)
	}
	held := &etcdsnap.Files{Dir: dirOf[leader]}
	want, err := held.ReadSealed(info.Name)
	if err != nil || string(sealed) != string(want) {
		t.Fatalf("fetched %d bytes, the holder's file is %d bytes (%v)", len(sealed), len(want), err)
	}
	if _, err := follower.Server().FetchEtcdSnapshot(ctx, "lab/20200101T000000Z-none", info.Replicas); err == nil {
		t.Fatal("fetching an unknown snapshot succeeded")
	}
}

// TestEtcdSnapshotFilesCopiedToEveryReplica: every replica copies the
// snapshot file it lacks, byte for byte, so the snapshot outlives the disk
// of the replica that took it: with the holder's file gone and the holder
// stopped, the new leader exports the snapshot from its own copy.
func TestEtcdSnapshotFilesCopiedToEveryReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("three raft replicas: skipped with -short")
	}
	r := newSnapshotReplicas(t, 100*time.Millisecond)
	want, err := (&etcdsnap.Files{Dir: r.dirOf[r.leader]}).ReadSealed(r.info.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.ctls {
		files := &etcdsnap.Files{Dir: r.dirOf[c]}
		if err := harness.Poll(30*time.Second, func() error {
			got, err := files.ReadSealed(r.info.Name)
			if err == nil && string(got) != string(want) {
				return fmt.Errorf("copy of %d bytes differs from the holder's %d", len(got), len(want))
			}
			return err
		}); err != nil {
			t.Fatalf("replica %s: %v", c.Node().ID(), err)
		}
	}

	// The holder's disk is gone, and the holder with it.
	if err := (&etcdsnap.Files{Dir: r.dirOf[r.leader]}).Remove(r.info.Name); err != nil {
		t.Fatal(err)
	}
	if err := r.leader.Close(); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for _, c := range r.ctls {
		if c != r.leader {
			rest = append(rest, c.HTTPAddr())
		}
	}
	setControllers(t, r.e, rest...)
	out := filepath.Join(r.e.dir, "exported.db")
	short := strings.TrimPrefix(r.info.Name, "lab/")
	if err := harness.Poll(30*time.Second, func() error {
		_, _, err := r.e.run("kubernetes", "etcd", "snapshot", "export", "lab", short, "-o", out)
		return err
	}); err != nil {
		t.Fatalf("export after the holder was lost: %v", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != r.info.SHA256 {
		t.Fatalf("exported file's sha256 %x, the record's %s", sum, r.info.SHA256)
	}
}
