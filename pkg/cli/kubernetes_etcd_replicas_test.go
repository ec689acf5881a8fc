package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/tests/harness"
)

// TestEtcdSnapshotFileFetchedFromHolder runs three in-process controller
// replicas: an imported snapshot is a file on the leader only, and a
// follower fetches it from the leader over the replicas' mutual TLS (the
// sealed file route), byte for byte the file the leader holds.
func TestEtcdSnapshotFileFetchedFromHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("three raft replicas: skipped with -short")
	}
	e := newKctlEnv(t)
	pkiDir := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443,127.0.0.1:7444,127.0.0.1:7445", "--out", pkiDir)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var ctls []*controller.Controller
	for i := range 3 {
		cfg := controller.Config{
			DataDir: filepath.Join(e.dir, fmt.Sprintf("data-%d", i)), Listen: "127.0.0.1:0",
			PKIDir: filepath.Join(pkiDir, fmt.Sprintf("controller-%d", i)), FastTimeouts: true, Bootstrap: i == 0,
		}
		if i > 0 {
			cfg.Join = []string{ctls[0].HTTPAddr()}
		}
		c, err := controller.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		ctls = append(ctls, c)
	}
	setControllers(t, e, ctls[0].HTTPAddr())
	pollMembers(t, e, func(rows [][]string) bool { return len(rows) == 3 && leaderOf(rows) != "" })
	var leader, follower *controller.Controller
	dirOf := map[*controller.Controller]string{}
	for i, c := range ctls {
		dirOf[c] = filepath.Join(e.dir, fmt.Sprintf("data-%d", i), etcdsnap.DirName)
		if c.Node().IsLeader() {
			leader = c
		} else if follower == nil {
			follower = c
		}
	}
	if leader == nil || follower == nil {
		t.Fatal("no leader and follower")
	}
	lab := api.KubernetesCluster{APIVersion: api.APIVersion, Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: "lab"},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", APIServerEndpoint: "127.0.0.21:6444", ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "cp1", AdvertiseAddress: "127.0.0.21"}},
		}}
	lab.Default()
	storeThroughRaft(t, leader, api.KindKubernetesCluster, "lab", lab)
	src := filepath.Join(e.dir, "backup.db")
	writeEtcdDB(t, src, 11)
	if _, _, err := e.run("kubernetes", "etcd", "restore", "lab", "--from-file", src); !errors.Is(err, ErrNotConfirmed) {
		t.Fatalf("import = %v", err)
	}
	list, err := etcdsnap.List(leader.Node().State(), "lab")
	if err != nil || len(list) != 1 {
		t.Fatalf("snapshots %+v (%v)", list, err)
	}
	info := list[0]
	if len(info.Replicas) != 1 || info.Replicas[0] != leader.Node().ID() {
		t.Fatalf("holders %v, want the leader %s", info.Replicas, leader.Node().ID())
	}
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
