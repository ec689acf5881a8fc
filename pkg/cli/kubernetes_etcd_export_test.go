package cli

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
)

// writeEtcdDB writes a bbolt database shaped like etcd's at revision rev
// to path and returns its hex SHA-256.
func writeEtcdDB(t *testing.T, path string, rev int64) string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("key"))
		if err != nil {
			return err
		}
		for r := int64(1); r <= rev; r++ {
			k := make([]byte, 17)
			binary.BigEndian.PutUint64(k, uint64(r))
			k[8] = '_'
			if err := b.Put(k, []byte("a Kubernetes Secret: hunter2")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return fileSHA(t, path)
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestEtcdSnapshotFileRoundTrip runs against a real in-process controller:
// restore --from-file uploads an etcd database file, which the controller
// keeps as a sealed file in its data directory while raft records only its
// metadata; snapshot list shows it with its checksum; snapshot export
// writes back a file with that same checksum; restoring it by name is
// recorded.
func TestEtcdSnapshotFileRoundTrip(t *testing.T) {
	e := newKctlEnv(t)
	pkiDir := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443", "--out", pkiDir)
	ctl := startController(t, e, filepath.Join(pkiDir, "controller-0"))
	lab := api.KubernetesCluster{APIVersion: api.APIVersion, Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: "lab"},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", APIServerEndpoint: "127.0.0.21:6444", ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "cp1", AdvertiseAddress: "127.0.0.21"}},
		}}
	lab.Default()
	storeThroughRaft(t, ctl, api.KindKubernetesCluster, "lab", lab)

	src := filepath.Join(e.dir, "backup.db")
	sum := writeEtcdDB(t, src, 9)
	out, _, err := e.run("kubernetes", "etcd", "restore", "lab", "--from-file", src)
	if !errors.Is(err, ErrNotConfirmed) || !strings.Contains(out, "imported as lab/") || !strings.Contains(out, "sha256 "+sum) {
		t.Fatalf("restore --from-file without a terminal = %v\n%s", err, out)
	}
	list, err := etcdsnap.List(ctl.Node().State(), "lab")
	if err != nil || len(list) != 1 {
		t.Fatalf("snapshots %+v (%v), want the imported one", list, err)
	}
	info := list[0]
	if info.SHA256 != sum || info.Revision != 9 || info.Reason != etcdsnap.ReasonImported || info.Location != apiv1.EtcdSnapshotOnController {
		t.Fatalf("imported snapshot %+v", info)
	}
	obj, _ := ctl.Node().State().Get(apiv1.KindEtcdSnapshot, info.Name)
	if strings.Contains(string(obj.Data), "ciphertext") || strings.Contains(string(obj.Data), "hunter2") {
		t.Fatalf("raft holds the snapshot's content: %s", obj.Data)
	}
	files := &etcdsnap.Files{Dir: filepath.Join(e.dir, "data", etcdsnap.DirName)}
	path, err := files.Path(info.Name)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no snapshot file on the controller's disk: %v", err)
	}
	if strings.Contains(string(onDisk), "hunter2") {
		t.Fatal("the snapshot file is not sealed")
	}

	short := strings.TrimPrefix(info.Name, "lab/")
	listed := e.must("kubernetes", "etcd", "snapshot", "list", "lab")
	if !strings.Contains(listed, short) || !strings.Contains(listed, sum) || !strings.Contains(listed, "controller (") {
		t.Fatalf("snapshot list:\n%s", listed)
	}
	if _, stderr, _ := e.run("kubernetes", "etcd", "snapshot", "list", "lab"); stderr != "" {
		t.Fatalf("snapshot list of a cluster without node backups notes %q", stderr)
	}
	onNodes := lab
	onNodes.Spec.EtcdBackup = &api.EtcdBackupSpec{Target: api.BackupTargetNodes}
	onNodes.Default()
	storeThroughRaft(t, ctl, api.KindKubernetesCluster, "lab", onNodes)
	if _, stderr, err := e.run("kubernetes", "etcd", "snapshot", "list", "lab"); err != nil || !strings.Contains(stderr, "on each control plane, in "+api.DefaultNodeBackupPath) {
		t.Fatalf("snapshot list of a cluster with node backups: %v, stderr %q", err, stderr)
	}
	storeThroughRaft(t, ctl, api.KindKubernetesCluster, "lab", lab)

	exported := filepath.Join(e.dir, "exported.db")
	out = e.must("kubernetes", "etcd", "snapshot", "export", "lab", short, "-o", exported)
	if got := fileSHA(t, exported); got != sum || !strings.Contains(out, "sha256 "+sum) {
		t.Fatalf("exported sha256 %s, want %s\n%s", got, sum, out)
	}
	if fi, err := os.Stat(exported); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("exported file mode %v (%v), want 0600", fi.Mode(), err)
	}
	if _, _, err := e.run("kubernetes", "etcd", "snapshot", "export", "lab", "20200101T000000Z-none", "-o", filepath.Join(e.dir, "none.db")); err == nil {
		t.Fatal("export of an unknown snapshot succeeded")
	}
	if _, err := os.Stat(filepath.Join(e.dir, "none.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed export left a file: %v", err)
	}

	out = e.must("kubernetes", "etcd", "restore", "lab", "--from", short, "--yes")
	if !strings.Contains(out, "recorded (generation 1)") {
		t.Fatalf("restore of the imported snapshot:\n%s", out)
	}
}
