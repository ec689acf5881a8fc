package etcdsnap

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// ReasonScheduled is the reason of a backup spec.etcdBackup scheduled; the
// schedule's retention applies only to these.
const ReasonScheduled = "scheduled"

// ReasonImported is the reason of a snapshot uploaded from a file.
const ReasonImported = "imported"

// SweepGrace is how old a file without a record must be before Sweep
// removes it: a snapshot's file is written before its record commits.
const SweepGrace = 10 * time.Minute

// KeepFile writes snap of cluster, taken at now for reason, as a sealed file
// of files held by replica, reads the file back and verifies it (it opens,
// its SHA-256 is the snapshot's, bbolt opens the database), and returns the
// info and the create-only put that records the metadata in raft. The
// content never enters raft. The caller drops what retention picks
// (Expired, DropOps) in the same batch.
func KeepFile(files *Files, replica string, cluster string, snap *Snapshot, reason string, now time.Time) (apiv1.EtcdSnapshotInfo, store.Op, error) {
	if reason == "" {
		reason = ReasonManual
	}
	name := Name(cluster, now, reason)
	gz, err := compress(snap.Data)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, store.Op{}, fmt.Errorf("store etcd snapshot %s: %w", name, err)
	}
	size, err := files.Write(name, gz)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, store.Op{}, err
	}
	info := apiv1.EtcdSnapshotInfo{
		Name: name, Cluster: cluster, TakenAt: now.UTC().Format(time.RFC3339), Reason: reason,
		Member: snap.Member, SizeBytes: int64(len(snap.Data)), StoredBytes: size,
		SHA256: snap.SHA256, Revision: snap.Revision,
		Location: apiv1.EtcdSnapshotOnController, Replicas: []string{replica},
	}
	if err := files.verify(info); err != nil {
		_ = files.Remove(name)
		return apiv1.EtcdSnapshotInfo{}, store.Op{}, err
	}
	data, err := json.Marshal(Stored{EtcdSnapshotInfo: info})
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, store.Op{}, fmt.Errorf("encode etcd snapshot %s: %w", name, err)
	}
	return info, store.Op{Put: &store.Put{Kind: apiv1.KindEtcdSnapshot, Name: name, Data: data, ExpectModifyIndex: store.Expect(0)}}, nil
}

// verify reads info's file back as a restore would and checks it.
func (f *Files) verify(info apiv1.EtcdSnapshotInfo) error {
	gz, err := f.Read(info.Name)
	if err != nil {
		return fmt.Errorf("verify etcd snapshot %s: %w", info.Name, err)
	}
	raw, err := Decompress(gz)
	if err != nil {
		return fmt.Errorf("verify etcd snapshot %s: %w", info.Name, err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != info.SHA256 {
		return fmt.Errorf("verify etcd snapshot %s: %w: sha256 mismatch", info.Name, ErrInvalid)
	}
	if _, err := Verify(raw, f.Dir); err != nil {
		return fmt.Errorf("verify etcd snapshot %s: %w", info.Name, err)
	}
	return nil
}

// OpenWith is Open for snapshots of either location: the in-raft content,
// or the file in files (ErrNotLocal when this replica holds none; files may
// be nil when no replica directory is configured).
func OpenWith(files *Files, sealer store.Sealer, st *store.State, name string) (apiv1.EtcdSnapshotInfo, []byte, error) {
	o, ok := st.Get(apiv1.KindEtcdSnapshot, name)
	if !ok {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("open %s: %w", name, ErrNotFound)
	}
	var s Stored
	if err := json.Unmarshal(o.Data, &s); err != nil {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("decode etcd snapshot %s: %w", name, err)
	}
	if s.Location != apiv1.EtcdSnapshotOnController {
		return Open(sealer, st, name)
	}
	if files == nil {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("open etcd snapshot %s: %w", name, ErrNotLocal)
	}
	gz, err := files.Read(name)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, nil, err
	}
	raw, err := Decompress(gz)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("open etcd snapshot %s: %w", name, err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != s.SHA256 {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("open etcd snapshot %s: %w: sha256 mismatch", name, ErrInvalid)
	}
	return s.EtcdSnapshotInfo, gz, nil
}

// Sweep removes the files of files that no EtcdSnapshot records any more
// (retention ran on another replica) once they are older than SweepGrace,
// and returns their names.
func (f *Files) Sweep(st *store.State, now time.Time) ([]string, error) {
	names, err := f.Names()
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, name := range names {
		if _, ok := st.Get(apiv1.KindEtcdSnapshot, name); ok {
			continue
		}
		path, err := f.Path(name)
		if err != nil {
			continue
		}
		fi, err := os.Stat(path)
		if err != nil || now.Sub(fi.ModTime()) < SweepGrace {
			continue
		}
		if err := f.Remove(name); err != nil {
			return removed, err
		}
		removed = append(removed, name)
	}
	return removed, nil
}
