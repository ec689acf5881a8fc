package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
)

// Bounds of the backup schedule.
const (
	// DefaultBackupCheckInterval is how often the leader looks for due
	// backups and expired ones.
	DefaultBackupCheckInterval = 30 * time.Second
	// BackupRetryDelay is how long a cluster whose backup failed waits
	// before the next attempt (or its interval, when shorter).
	BackupRetryDelay = 5 * time.Minute
)

// backupScheduler takes the scheduled backups of spec.etcdBackup. It runs
// in its own goroutine of the leader's orchestrator, so a slow snapshot
// never holds up reconciliation; it writes only EtcdSnapshot records.
type backupScheduler struct {
	o *Orchestrator
	// last is each cluster's last backup attempt on this leader.
	last map[string]backupAttempt
}

// newBackupScheduler is the backup schedule of o, with no attempt made yet.
func newBackupScheduler(o *Orchestrator) *backupScheduler {
	return &backupScheduler{o: o, last: map[string]backupAttempt{}}
}

// runBackups checks for due backups every BackupCheckInterval until ctx ends.
func (o *Orchestrator) runBackups(ctx context.Context) {
	if o.cfg.Backups == nil {
		return
	}
	b := newBackupScheduler(o)
	t := time.NewTicker(o.cfg.BackupCheckInterval)
	defer t.Stop()
	for {
		b.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pass takes every due backup and applies every cluster's retention, then
// removes this replica's files that no record names any more.
func (b *backupScheduler) pass(ctx context.Context) {
	o := b.o
	now := o.cfg.Now()
	for _, obj := range o.cfg.Node.State().List(api.KindKubernetesCluster) {
		var c api.KubernetesCluster
		if err := json.Unmarshal(obj.Data, &c); err != nil {
			continue
		}
		if c.Spec.ControllerBackups() != nil {
			took, err := b.cluster(ctx, &c, now)
			if ctx.Err() != nil {
				return
			}
			switch {
			case err != nil:
				b.last[c.Metadata.Name] = backupAttempt{at: now, err: err}
				o.log.Error("scheduled etcd backup failed", "cluster", c.Metadata.Name, "err", err)
			case took:
				b.last[c.Metadata.Name] = backupAttempt{at: now}
			}
		}
		if err := b.report(ctx, c.Metadata.Name, now); err != nil && ctx.Err() == nil {
			o.log.Warn("report etcd backup condition", "cluster", c.Metadata.Name, "err", err)
		}
	}
	removed, err := o.cfg.Backups.Sweep(o.cfg.Node.State(), now)
	if err != nil {
		o.log.Warn("sweep etcd snapshot files", "err", err)
	}
	for _, name := range removed {
		o.log.Info("etcd snapshot file without a record removed", "snapshot", name)
	}
}

// cluster takes c's backup when it is due and drops the backups its
// retention expires; took reports whether a backup was taken.
func (b *backupScheduler) cluster(ctx context.Context, c *api.KubernetesCluster, now time.Time) (took bool, err error) {
	o := b.o
	name := c.Metadata.Name
	spec := c.Spec.ControllerBackups()
	if c.Status.Phase == api.PhaseDeleting || c.Status.EtcdRestore != nil {
		return false, nil
	}
	st := o.cfg.Node.State()
	list, err := etcdsnap.List(st, name)
	if err != nil {
		return false, err
	}
	// Age passes whether or not a backup is due or can be taken.
	if err := o.expireBackups(ctx, name, etcdsnap.Scheduled(list, true), spec, now); err != nil {
		return false, err
	}
	interval := spec.IntervalDuration()
	if a, ok := b.last[name]; ok && a.err != nil && now.Before(a.at.Add(min(interval, BackupRetryDelay))) {
		return false, nil
	}
	if !etcdsnap.Due(list, interval, now) {
		return false, nil
	}
	sec, err := etcdsnap.OpenClusterSecrets(o.cfg.Keyring, st, name)
	if errors.Is(err, etcdsnap.ErrNotFound) {
		return false, nil // not bootstrapped yet: nothing to back up
	}
	if err != nil {
		return false, err
	}
	info, err := o.storeSnapshotFile(ctx, c, sec, etcdsnap.ReasonScheduled, spec.KeepCount(), spec.MaxAgeDuration())
	if err != nil {
		return false, err
	}
	o.log.Info("scheduled etcd backup stored", "cluster", name, "snapshot", info.Name, "sha256", info.SHA256,
		"revision", info.Revision, "bytes", info.SizeBytes)
	return true, nil
}

// expireBackups drops the scheduled backups retention expires at now.
func (o *Orchestrator) expireBackups(ctx context.Context, cluster string, scheduled []apiv1.EtcdSnapshotInfo, spec *api.EtcdBackupSpec, now time.Time) error {
	drop := etcdsnap.Expired(scheduled, spec.KeepCount(), spec.MaxAgeDuration(), now)
	if len(drop) == 0 {
		return nil
	}
	if err := o.apply(ctx, etcdsnap.DropOps(o.cfg.Node.State(), drop), now); err != nil {
		return fmt.Errorf("drop expired etcd backups of %s: %w", cluster, err)
	}
	o.removeFiles(drop)
	return nil
}

// storeSnapshotFile takes a snapshot of c, keeps it as a verified file on
// this replica, records its metadata with the retention of its class in one
// raft entry, then removes the dropped snapshots' files.
func (o *Orchestrator) storeSnapshotFile(ctx context.Context, c *api.KubernetesCluster, sec *pki.ClusterSecrets, reason string, keep int, maxAge time.Duration) (apiv1.EtcdSnapshotInfo, error) {
	snap, err := o.takeSnapshot(ctx, c, sec)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, err
	}
	now := o.cfg.Now()
	res, err := etcdsnap.StoreFile(o.cfg.Backups, o.cfg.ReplicaID, o.cfg.Node.State(), c.Metadata.Name, snap, reason, now, keep, maxAge)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, err
	}
	if err := o.apply(ctx, res.Ops, now); err != nil {
		_ = o.cfg.Backups.Remove(res.Info.Name)
		return apiv1.EtcdSnapshotInfo{}, fmt.Errorf("record etcd snapshot %s: %w", res.Info.Name, err)
	}
	o.removeFiles(res.Dropped)
	return res.Info, nil
}

// removeFiles removes the local files of dropped snapshots; files other
// replicas hold are swept there once they lead.
func (o *Orchestrator) removeFiles(drop []apiv1.EtcdSnapshotInfo) {
	for _, d := range drop {
		if d.Location != apiv1.EtcdSnapshotOnController {
			continue
		}
		if err := o.cfg.Backups.Remove(d.Name); err != nil {
			o.log.Warn("remove dropped etcd snapshot file", "snapshot", d.Name, "err", err)
		}
	}
}

// takeSnapshot streams a snapshot of c through cfg.TakeSnapshot or etcd's gateway.
func (o *Orchestrator) takeSnapshot(ctx context.Context, c *api.KubernetesCluster, sec *pki.ClusterSecrets) (*etcdsnap.Snapshot, error) {
	if o.cfg.TakeSnapshot != nil {
		return o.cfg.TakeSnapshot(ctx, c, sec)
	}
	return o.snapshotTaker().Take(ctx, c, sec)
}
