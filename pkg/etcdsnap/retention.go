package etcdsnap

import (
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// Scheduled returns the snapshots of list whose reason is (scheduled) or is
// not (!scheduled) ReasonScheduled, in list's order.
func Scheduled(list []apiv1.EtcdSnapshotInfo, scheduled bool) []apiv1.EtcdSnapshotInfo {
	var out []apiv1.EtcdSnapshotInfo
	for _, i := range list {
		if (i.Reason == ReasonScheduled) == scheduled {
			out = append(out, i)
		}
	}
	return out
}

// Due reports whether a scheduled backup is due at now: none was taken
// yet, or the newest of list (oldest first, as List returns it) was taken
// interval or more before now.
func Due(list []apiv1.EtcdSnapshotInfo, interval time.Duration, now time.Time) bool {
	s := Scheduled(list, true)
	if len(s) == 0 {
		return true
	}
	last, err := time.Parse(time.RFC3339, s[len(s)-1].TakenAt)
	if err != nil {
		return true
	}
	return !now.Before(last.Add(interval))
}

// Expired returns the snapshots of list (oldest first) that a retention of
// keep and maxAge (0: no age limit) drops at now: all but the newest keep,
// and of those the ones taken more than maxAge before now. The newest
// snapshot is never dropped for its age, so a cluster whose etcd stopped
// answering still has its last backup.
func Expired(list []apiv1.EtcdSnapshotInfo, keep int, maxAge time.Duration, now time.Time) []apiv1.EtcdSnapshotInfo {
	var out []apiv1.EtcdSnapshotInfo
	for i, info := range list {
		newest := i == len(list)-1
		if len(list)-i > keep && !newest {
			out = append(out, info)
			continue
		}
		if maxAge <= 0 || newest {
			continue
		}
		if at, err := time.Parse(time.RFC3339, info.TakenAt); err == nil && now.Sub(at) > maxAge {
			out = append(out, info)
		}
	}
	return out
}

// DropOps are the deletes of the records of drop, each conditional on the
// record st holds (none for a record already gone).
func DropOps(st *store.State, drop []apiv1.EtcdSnapshotInfo) []store.Op {
	var ops []store.Op
	for _, d := range drop {
		if o, ok := st.Get(apiv1.KindEtcdSnapshot, d.Name); ok {
			ops = append(ops, store.Op{Delete: &store.Delete{Kind: apiv1.KindEtcdSnapshot, Name: d.Name, ExpectModifyIndex: store.Expect(o.ModifyIndex)}})
		}
	}
	return ops
}

// FileResult is what StoreFile returns.
type FileResult struct {
	// Info is the new snapshot's metadata.
	Info apiv1.EtcdSnapshotInfo
	// Ops record it and drop what retention picked, in one batch.
	Ops []store.Op
	// Dropped are the snapshots Ops deletes; remove their files once Ops
	// committed.
	Dropped []apiv1.EtcdSnapshotInfo
}

// StoreFile keeps snap as a verified file (KeepFile) and adds the
// retention of its class to the ops: a scheduled backup drops the
// scheduled ones beyond keep or older than maxAge, any other reason the
// unscheduled ones beyond DefaultKeep. The new snapshot counts.
func StoreFile(files *Files, replica string, st *store.State, cluster string, snap *Snapshot, reason string, now time.Time, keep int, maxAge time.Duration) (FileResult, error) {
	info, put, err := KeepFile(files, replica, cluster, snap, reason, now)
	if err != nil {
		return FileResult{}, err
	}
	list, err := List(st, cluster)
	if err != nil {
		_ = files.Remove(info.Name)
		return FileResult{}, err
	}
	scheduled := info.Reason == ReasonScheduled
	if !scheduled {
		keep, maxAge = DefaultKeep, 0
	}
	drop := Expired(append(Scheduled(list, scheduled), info), max(keep, 1), maxAge, now)
	return FileResult{Info: info, Ops: append([]store.Op{put}, DropOps(st, drop)...), Dropped: drop}, nil
}
