package orchestrator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// TestEtcdRestoreRendersSnapshotAndFinishes drives a restore request on a
// ready cluster: every control plane gets the snapshot (sealed in the
// store) and the restore oneshot, etcd moves to the new generation's data
// directory; once every member reported it and the cluster is healthy the
// generation is recorded, the restore removed, audited, and the snapshot
// and oneshot dropped again without restarting etcd.
func TestEtcdRestoreRendersSnapshotAndFinishes(t *testing.T) {
	testEtcdRestore(t, false)
}

// TestEtcdRestoreFromSnapshotFile is the same restore from a snapshot kept
// as a sealed file on the controller's disk (raft holds only its
// metadata), as a scheduled backup or an imported file is.
func TestEtcdRestoreFromSnapshotFile(t *testing.T) {
	testEtcdRestore(t, true)
}

func testEtcdRestore(t *testing.T, fromFile bool) {
	e := newEnv(t, 1)
	e.cfg.HealthInterval = 50 * time.Millisecond
	if fromFile {
		r := e.rc.Replica(0)
		e.cfg.Backups = &etcdsnap.Files{Dir: filepath.Join(r.DataDir, etcdsnap.DirName), Sealer: e.keyring}
		e.cfg.ReplicaID = r.ID
	}
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	e.waitStates(c)
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)

	raw := []byte("etcd database bytes, a Kubernetes Secret inside: hunter2")
	if fromFile {
		raw = etcdDBBytes(t, 42)
	}
	sum := sha256.Sum256(raw)
	snap := &etcdsnap.Snapshot{Data: raw, Member: "node-11", SHA256: hex.EncodeToString(sum[:]), Revision: 42}
	var info apiv1.EtcdSnapshotInfo
	if fromFile {
		res, err := etcdsnap.StoreFile(e.cfg.Backups, e.cfg.ReplicaID, e.state(), "lab", snap, etcdsnap.ReasonImported, time.Now(), etcdsnap.DefaultKeep, 0)
		if err != nil {
			t.Fatal(err)
		}
		info = res.Info
		e.apply(res.Ops...)
	} else {
		var ops []store.Op
		var err error
		info, ops, err = etcdsnap.Ops(e.keyring, e.state(), "lab", snap, "manual", time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		e.apply(ops...)
	}

	cur, _ := e.cluster("lab")
	cur.Status.EtcdRestore = &api.EtcdRestore{Snapshot: info.Name, Generation: 1, Phase: api.EtcdRestorePhaseRestoring, StartedAt: time.Now().UTC().Format(time.RFC3339)}
	cur.Status.Phase = api.PhaseUpdating
	data, err := json.Marshal(cur)
	if err != nil {
		t.Fatal(err)
	}
	e.apply(store.Op{Put: &store.Put{Kind: api.KindKubernetesCluster, Name: "lab", Data: data}})

	snapPath := render.EtcdRestoreSnapshotPath(1)
	var restoring map[string]api.NodeState
	if err := harness.Poll(waitFor, func() error {
		restoring = e.states("lab")
		for _, n := range c.Spec.ControlPlaneNodes {
			if !hasUnitNamed(restoring[n.NodeID], render.UnitEtcdRestore) {
				return fmt.Errorf("%s has no %s yet", n.NodeID, render.UnitEtcdRestore)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, ns := range restoring {
		f := fileNamed(ns, snapPath)
		if id == "node-14" {
			if f != nil || hasUnitNamed(ns, render.UnitEtcdRestore) {
				t.Errorf("worker %s got the restore", id)
			}
			continue
		}
		if f == nil || !f.Secret || f.Encoding != api.EncodingGzipBase64 || !secrets.IsSealedString(f.Content) {
			t.Errorf("%s: snapshot file %+v, want a sealed secret gzip+base64 file", id, f)
		}
		etcd := unitNamed(ns, render.UnitEtcd)
		if !slices.Contains(etcd.Argv, "--data-dir=/var/lib/etcd-restore/1/data") || !slices.Contains(etcd.After, render.UnitEtcdRestore) {
			t.Errorf("%s: etcd argv %v after %v", id, etcd.Argv, etcd.After)
		}
	}
	for _, kind := range []string{api.KindNodeState, apiv1.KindEtcdSnapshot, api.KindKubernetesCluster} {
		for _, o := range e.state().List(kind) {
			if bytes.Contains(o.Data, []byte("hunter2")) {
				t.Errorf("%s/%s holds the snapshot in clear", kind, o.Name)
			}
		}
	}
	if got, _ := e.cluster("lab"); got.Status.EtcdGeneration != 0 || got.Status.EtcdRestore == nil {
		t.Fatalf("restore finished before any report: %+v", got.Status)
	}

	e.reportAll("lab")
	var done *api.KubernetesCluster
	if err := harness.Poll(waitFor, func() error {
		done, _ = e.cluster("lab")
		if done.Status.EtcdRestore != nil || done.Status.EtcdGeneration != 1 {
			return fmt.Errorf("restore %+v generation %d", done.Status.EtcdRestore, done.Status.EtcdGeneration)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !isTrue(done.Status.Conditions, CondEtcdRestored) {
		t.Errorf("EtcdRestored not True: %+v", done.Status.Conditions)
	}
	// The audit entry is committed right after the cluster's status.
	if err := harness.Poll(waitFor, func() error {
		for _, o := range e.state().List(apiv1.KindAudit) {
			var a apiv1.AuditEntry
			if json.Unmarshal(o.Data, &a) == nil && a.Route == restoreAuditRoute && a.Object == "KubernetesCluster/lab" {
				return nil
			}
		}
		return errors.New("no audit entry for the finished restore")
	}); err != nil {
		t.Error(err)
	}

	// The next pass drops the snapshot and the oneshot; etcd keeps its hash.
	if err := harness.Poll(waitFor, func() error {
		for id, ns := range e.states("lab") {
			if fileNamed(ns, snapPath) != nil || hasUnitNamed(ns, render.UnitEtcdRestore) {
				return fmt.Errorf("%s still carries the restore", id)
			}
			if id == "node-14" {
				continue
			}
			if got, want := unitNamed(ns, render.UnitEtcd).InputHash, unitNamed(restoring[id], render.UnitEtcd).InputHash; got != want {
				return fmt.Errorf("%s: etcd input hash changed after the restore: %s, want %s", id, got, want)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)
}

// TestEtcdRestoreOfMissingSnapshotIsAbandoned: a restore naming a snapshot
// the store no longer holds is dropped with EtcdRestored False.
func TestEtcdRestoreOfMissingSnapshotIsAbandoned(t *testing.T) {
	e := newEnv(t, 1)
	c := labCluster(t, "lab", e.apiPort())
	c.Status.EtcdRestore = &api.EtcdRestore{Snapshot: "lab/20261130T000000Z-manual", Generation: 1, Phase: api.EtcdRestorePhaseRestoring}
	e.registerNodes(c)
	e.putCluster(c, api.PhaseUpdating)
	e.runOrchestrator()
	if err := harness.Poll(waitFor, func() error {
		got, _ := e.cluster("lab")
		cond := findCondition(got.Status.Conditions, CondEtcdRestored)
		if got.Status.EtcdRestore != nil || cond == nil || cond.Status != StatusFalse {
			return fmt.Errorf("restore %+v condition %+v", got.Status.EtcdRestore, cond)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, ns := range e.states("lab") {
		if hasUnitNamed(ns, render.UnitEtcdRestore) {
			t.Errorf("%s got a restore unit for a missing snapshot", id)
		}
	}
}

func unitNamed(ns api.NodeState, name string) api.Unit {
	for _, u := range ns.Units {
		if u.Name == name {
			return u
		}
	}
	return api.Unit{}
}

func hasUnitNamed(ns api.NodeState, name string) bool { return unitNamed(ns, name).Name != "" }

func fileNamed(ns api.NodeState, path string) *api.File {
	for i := range ns.Files {
		if ns.Files[i].Path == path {
			return &ns.Files[i]
		}
	}
	return nil
}
