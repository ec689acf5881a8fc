package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/store"
)

// CondEtcdBackup says whether the scheduled etcd backups the controller
// keeps for a cluster (spec.etcdBackup, target controller) are taken: True with the newest backup after an attempt
// that worked, False when the last attempt failed (the error, naming each
// control plane tried) or when the newest backup is older than
// BackupStaleIntervals intervals. A cluster without spec.etcdBackup, or
// whose backups its control planes keep (target nodes), has no such
// condition. Like CondCertificates it warns and does not change the
// phase: a cluster whose backups fail still serves.
const CondEtcdBackup = "EtcdBackup"

// Reasons of CondEtcdBackup.
const (
	// ReasonBackedUp: the last scheduled backup was taken and verified.
	ReasonBackedUp = "BackedUp"
	// ReasonBackupFailed: the last scheduled backup attempt failed.
	ReasonBackupFailed = "BackupFailed"
	// ReasonBackupStale: the newest scheduled backup is older than
	// BackupStaleIntervals intervals.
	ReasonBackupStale = "Stale"
)

// Bounds of the EtcdBackup condition.
const (
	// BackupStaleIntervals is how many intervals old the newest scheduled
	// backup may be before CondEtcdBackup turns False (a backup missed
	// once is retried; missed twice is worth a warning).
	BackupStaleIntervals = 2
	// MaxBackupErrorText is how many bytes of a failed attempt's error the
	// condition keeps: enough to name every control plane tried.
	MaxBackupErrorText = 1024
)

// backupAttempt is the outcome of one scheduled backup attempt.
type backupAttempt struct {
	// at is when it ran.
	at time.Time
	// err is why it failed, nil when it worked.
	err error
}

// backupCondition is the EtcdBackup condition of a cluster whose newest
// scheduled backup is newest (nil: none) and whose last attempt on this
// leader is last (nil: none yet), given the condition it had (prev, nil:
// none). ok is false when there is nothing to say yet: no backup and no
// failure.
func backupCondition(prev *api.Condition, newest *apiv1.EtcdSnapshotInfo, interval time.Duration, last *backupAttempt, now time.Time) (api.Condition, bool) {
	msg := "no scheduled backup yet"
	stale := false
	if newest != nil {
		msg = fmt.Sprintf("newest backup %s taken %s from %s", newest.Name, newest.TakenAt, newest.Member)
		at, err := time.Parse(time.RFC3339, newest.TakenAt)
		if stale = err != nil || now.Sub(at) > BackupStaleIntervals*interval; stale {
			msg += fmt.Sprintf(", more than %d intervals (%s) ago", BackupStaleIntervals, BackupStaleIntervals*interval)
		}
	}
	reason := ReasonBackupFailed
	if stale {
		reason = ReasonBackupStale
	}
	switch {
	case last != nil && last.err != nil:
		msg = fmt.Sprintf("%s; the backup at %s failed: %v", msg, last.at.UTC().Format(time.RFC3339), last.err)
		return api.Condition{Type: CondEtcdBackup, Status: StatusFalse, Reason: reason, Message: clipTo(msg, MaxBackupErrorText)}, true
	case newest == nil:
		return api.Condition{}, false
	case stale:
		return api.Condition{Type: CondEtcdBackup, Status: StatusFalse, Reason: ReasonBackupStale, Message: msg}, true
	case last == nil && prev != nil && prev.Reason == ReasonBackupFailed:
		// Another leader's failure: this leader's first attempt replaces it.
		return *prev, true
	}
	return api.Condition{Type: CondEtcdBackup, Status: StatusTrue, Reason: ReasonBackedUp, Message: msg}, true
}

// report writes the EtcdBackup condition of the cluster name after this
// pass, or drops it when the cluster has no schedule. It writes only a change, conditional on the cluster's index:
// a concurrent reconcile wins and the next pass writes again.
func (b *backupScheduler) report(ctx context.Context, name string, now time.Time) error {
	o := b.o
	st := o.cfg.Node.State()
	obj, ok := st.Get(api.KindKubernetesCluster, name)
	if !ok {
		return nil
	}
	var c api.KubernetesCluster
	if err := json.Unmarshal(obj.Data, &c); err != nil {
		return fmt.Errorf("decode cluster %s: %w", name, err)
	}
	if c.Status.Phase == api.PhaseDeleting || c.Status.EtcdRestore != nil {
		return nil // no backup is taken; the condition waits
	}
	prev := findCondition(c.Status.Conditions, CondEtcdBackup)
	conds := slices.Clone(c.Status.Conditions)
	spec := c.Spec.ControllerBackups()
	if spec == nil {
		if prev == nil {
			return nil
		}
		conds = dropCondition(conds, CondEtcdBackup)
	} else {
		list, err := etcdsnap.List(st, name)
		if err != nil {
			return err
		}
		var newest *apiv1.EtcdSnapshotInfo
		if s := etcdsnap.Scheduled(list, true); len(s) > 0 {
			newest = &s[len(s)-1]
		}
		var last *backupAttempt
		if a, ok := b.last[name]; ok {
			last = &a
		}
		cond, ok := backupCondition(prev, newest, spec.IntervalDuration(), last, now)
		if !ok || (prev != nil && prev.Status == cond.Status && prev.Reason == cond.Reason && prev.Message == cond.Message) {
			return nil
		}
		conds = setCondition(conds, cond, now)
	}
	c.Status.Conditions = conds
	data, err := json.Marshal(&c)
	if err != nil {
		return fmt.Errorf("encode cluster %s: %w", name, err)
	}
	return o.apply(ctx, []store.Op{{Put: &store.Put{
		Kind: api.KindKubernetesCluster, Name: obj.Name, Data: data, ExpectModifyIndex: store.Expect(obj.ModifyIndex),
	}}}, now)
}
