package orchestrator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// etcdDBBytes is a bbolt database shaped like etcd's at revision rev, with
// a Kubernetes Secret's value in it.
func etcdDBBytes(t *testing.T, rev int64) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
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
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// backupEnv is a ready cluster with spec.etcdBackup and its sealed PKI in
// a real raft cluster, and an orchestrator on the leader whose snapshots
// come from a fake etcd and whose clock is fake.
type backupEnv struct {
	*env
	clock *fakeClock
	o     *Orchestrator
	files *etcdsnap.Files
	db    []byte
	fail  error
}

func newBackupEnv(t *testing.T, backup *api.EtcdBackupSpec) *backupEnv {
	t.Helper()
	// Each test drives one scheduler pass bound to the first leader, so
	// the replicas keep raft's default timeouts: a loaded machine must not
	// move leadership between the test's writes.
	steady := harness.Options{Replicas: 3, Hooks: harness.Hooks{Configure: func(_ *harness.Replica, c *raftnode.Config) { c.FastTimeouts = false }}}
	e := &backupEnv{env: newEnvWith(t, steady), clock: &fakeClock{now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}, db: etcdDBBytes(t, 42)}
	c := labCluster(t, "lab", e.apiPort())
	c.Spec.EtcdBackup = backup
	c.Default()
	if errs := c.Validate().Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	e.putCluster(c, api.PhaseReady)
	sec, err := pki.IssueClusterSecrets(c, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pt, err := json.Marshal(sec)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := e.keyring.Seal(store.KindSecret, secretName("lab"), pt)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(sealed)
	e.apply(store.Op{Put: &store.Put{Kind: store.KindSecret, Name: secretName("lab"), Data: data}})

	leader := e.rc.WaitLeader()
	e.files = &etcdsnap.Files{Dir: filepath.Join(leader.DataDir, etcdsnap.DirName), Sealer: e.keyring}
	cfg := e.cfg
	cfg.Node, cfg.Now, cfg.Backups, cfg.ReplicaID = leader.Node(), e.clock.Now, e.files, leader.ID
	cfg.TakeSnapshot = func(context.Context, *api.KubernetesCluster, *pki.ClusterSecrets) (*etcdsnap.Snapshot, error) {
		if e.fail != nil {
			return nil, e.fail
		}
		sum := sha256.Sum256(e.db)
		return &etcdsnap.Snapshot{Data: e.db, Member: "node-11", SHA256: hex.EncodeToString(sum[:]), Revision: 42}, nil
	}
	o, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.o = o
	return e
}

// names lists the cluster's snapshot records on replica i.
func (e *backupEnv) names(i int) []string {
	e.t.Helper()
	list, err := etcdsnap.List(e.rc.Replica(i).Node().State(), "lab")
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, s := range list {
		out = append(out, s.Name)
	}
	return out
}

// TestScheduledBackupsFollowTheClock drives the schedule with a fake clock:
// the first pass takes a backup, the next ones wait for the interval, the
// count retention drops the oldest (its file too), a manual snapshot is
// never dropped by the schedule, a failing etcd is retried after
// BackupRetryDelay, and age drops everything but the newest backup.
func TestScheduledBackupsFollowTheClock(t *testing.T) {
	e := newBackupEnv(t, &api.EtcdBackupSpec{Interval: "1h", Keep: 2, MaxAge: "3h"})
	b := newBackupScheduler(e.o)
	ctx := context.Background()
	manual, err := e.o.storeSnapshotFile(ctx, mustCluster(t, e.env), nil, "manual", etcdsnap.DefaultKeep, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.pass(ctx)
	first := e.names(0)
	if len(first) != 2 {
		t.Fatalf("after the first pass: %v, want the manual snapshot and one backup", first)
	}
	e.clock.Add(time.Hour - time.Second)
	b.pass(ctx)
	if got := e.names(0); len(got) != 2 {
		t.Fatalf("a second before the interval: %v, want no new backup", got)
	}
	e.clock.Add(time.Second)
	b.pass(ctx)
	if got := e.names(0); len(got) != 3 {
		t.Fatalf("at the interval: %v, want a second backup", got)
	}
	e.clock.Add(time.Hour)
	b.pass(ctx)
	got := e.names(0)
	if len(got) != 3 || got[0] != manual.Name || got[1] == first[1] {
		t.Fatalf("third backup with keep 2: %v, want the manual one and the newest two backups (not %s)", got, first[1])
	}
	if _, err := e.files.ReadSealed(first[1]); !errors.Is(err, etcdsnap.ErrNotLocal) {
		t.Fatalf("file of the dropped backup: %v, want it removed", err)
	}

	// etcd stops answering: the failure waits BackupRetryDelay, age passes.
	e.fail = errors.New("etcd down")
	e.clock.Add(time.Hour)
	b.pass(ctx)
	if a, ok := b.last["lab"]; !ok || a.err == nil {
		t.Fatal("a failed backup was not recorded")
	}
	e.fail = nil
	e.clock.Add(BackupRetryDelay - time.Second)
	b.pass(ctx)
	if got := e.names(0); len(got) != 3 {
		t.Fatalf("before the retry delay: %v", got)
	}
	e.fail = errors.New("etcd still down")
	e.clock.Add(time.Second)
	b.pass(ctx)
	e.clock.Add(4 * time.Hour)
	b.pass(ctx)
	got = e.names(0)
	if len(got) != 2 || got[0] != manual.Name {
		t.Fatalf("after maxAge with etcd down: %v, want the manual snapshot and the newest backup", got)
	}
}

// TestBackupsKeepOnlyMetadataInRaft: a backup is a sealed file on the
// leader's disk; every replica's store holds only its metadata (name,
// revision, size, checksum, holder), never the content; the file opens to
// the snapshot; a leader without the file fetches it from the holder.
func TestBackupsKeepOnlyMetadataInRaft(t *testing.T) {
	e := newBackupEnv(t, &api.EtcdBackupSpec{Interval: "1h"})
	b := newBackupScheduler(e.o)
	b.pass(context.Background())
	names := e.names(0)
	if len(names) != 1 {
		t.Fatalf("snapshots %v, want one backup", names)
	}
	name := names[0]
	path, err := e.files.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no backup file on the leader's disk: %v", err)
	}
	if bytes.Contains(raw, []byte("hunter2")) {
		t.Fatal("the backup file holds the snapshot in clear")
	}
	sum := sha256.Sum256(e.db)
	for i := range 3 {
		st := e.rc.Replica(i).Node().State()
		if err := pollRecord(st, name); err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		o, _ := st.Get(apiv1.KindEtcdSnapshot, name)
		if len(o.Data) > 1024 || bytes.Contains(o.Data, []byte("ciphertext\":\"")) {
			t.Fatalf("replica %d's record holds content: %d bytes", i, len(o.Data))
		}
		info, err := etcdsnap.Lookup(st, name)
		if err != nil {
			t.Fatal(err)
		}
		if info.SHA256 != hex.EncodeToString(sum[:]) || info.Revision != 42 || info.Location != apiv1.EtcdSnapshotOnController ||
			len(info.Replicas) != 1 || info.Replicas[0] != e.o.cfg.ReplicaID || info.StoredBytes != int64(len(raw)) {
			t.Fatalf("replica %d's record %+v", i, info)
		}
	}
	gz, err := e.o.openSnapshot(name)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := etcdsnap.Decompress(gz); !bytes.Equal(got, e.db) {
		t.Fatal("the file does not open to the snapshot")
	}

	// A replica without the file (e.g. the next leader) fetches it.
	other := e.rc.Replica(1)
	if other.ID == e.o.cfg.ReplicaID {
		other = e.rc.Replica(2)
	}
	cfg := e.o.cfg
	cfg.Node, cfg.ReplicaID = other.Node(), other.ID
	cfg.Backups = &etcdsnap.Files{Dir: filepath.Join(other.DataDir, etcdsnap.DirName), Sealer: e.keyring}
	if _, err := (&Orchestrator{cfg: cfg, log: e.o.log}).openSnapshot(name); !errors.Is(err, etcdsnap.ErrNotLocal) {
		t.Fatalf("open without the file and no fetch = %v, want ErrNotLocal", err)
	}
	var asked []string
	cfg.FetchSnapshot = func(_ context.Context, n string, replicas []string) ([]byte, error) {
		asked = replicas
		return e.files.ReadSealed(n)
	}
	gz, err = (&Orchestrator{cfg: cfg, log: e.o.log}).openSnapshot(name)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := etcdsnap.Decompress(gz); !bytes.Equal(got, e.db) || len(asked) != 1 || asked[0] != e.o.cfg.ReplicaID {
		t.Fatalf("fetched snapshot differs, or asked %v", asked)
	}
	if _, err := cfg.Backups.ReadSealed(name); err != nil {
		t.Fatalf("the fetched file was not kept: %v", err)
	}
}

func pollRecord(st *store.State, name string) error {
	deadline := time.Now().Add(waitFor)
	for {
		if _, ok := st.Get(apiv1.KindEtcdSnapshot, name); ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("record " + name + " never replicated")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st.Wait(ctx, apiv1.KindEtcdSnapshot, "", st.KindIndex(apiv1.KindEtcdSnapshot))
		cancel()
	}
}

func mustCluster(t *testing.T, e *env) *api.KubernetesCluster {
	t.Helper()
	c, ok := e.cluster("lab")
	if !ok {
		t.Fatal("no cluster lab")
	}
	return c
}

// TestNodeBackupsTakeNoControllerBackups: with target nodes the control
// planes take the backups; the leader takes none and reports no condition.
func TestNodeBackupsTakeNoControllerBackups(t *testing.T) {
	e := newBackupEnv(t, &api.EtcdBackupSpec{Interval: "1h", Keep: 2, Target: api.BackupTargetNodes})
	b := newBackupScheduler(e.o)
	b.pass(context.Background())
	if got := e.names(0); len(got) != 0 {
		t.Fatalf("controller backups with target nodes: %v", got)
	}
	if c := findCondition(mustCluster(t, e.env).Status.Conditions, CondEtcdBackup); c != nil {
		t.Fatalf("condition %+v", c)
	}
}
