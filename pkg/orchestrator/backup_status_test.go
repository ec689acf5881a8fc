package orchestrator

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

// backupCond is the cluster's EtcdBackup condition on the leader, nil when
// it has none.
func (e *backupEnv) backupCond() *api.Condition {
	e.t.Helper()
	c := mustCluster(e.t, e.env)
	return findCondition(c.Status.Conditions, CondEtcdBackup)
}

// TestFailedBackupTurnsConditionFalse drives the schedule through etcd's
// real snapshot client: with every control plane's etcd refusing the
// connection the EtcdBackup condition turns False, naming each member tried
// and the newest backup; once the failure outlasts two intervals it says
// the backups are stale; when etcd answers again the retry turns it True
// with the new backup. The phase never changes. Without a schedule the
// condition goes away.
func TestFailedBackupTurnsConditionFalse(t *testing.T) {
	e := newBackupEnv(t, &api.EtcdBackupSpec{Interval: "1h"})
	var url atomic.Value
	url.Store("https://127.0.0.1:1") // nothing listens: connection refused
	e.o.cfg.TakeSnapshot = nil
	e.o.cfg.Etcd = &HTTPEtcd{EtcdEndpoint: func(string) string { return url.Load().(string) }}
	b := newBackupScheduler(e.o)
	ctx := context.Background()

	b.pass(ctx)
	cond := e.backupCond()
	if cond == nil || cond.Status != StatusFalse || cond.Reason != ReasonBackupFailed {
		t.Fatalf("EtcdBackup after a failed first backup: %+v, want False %s", cond, ReasonBackupFailed)
	}
	for _, want := range []string{"node-11", "node-12", "node-13", "no scheduled backup yet", "2026-11-30T00:00:00Z"} {
		if !strings.Contains(cond.Message, want) {
			t.Fatalf("EtcdBackup message %q does not say %q", cond.Message, want)
		}
	}
	if c := mustCluster(t, e.env); c.Status.Phase != api.PhaseReady {
		t.Fatalf("phase %s after a failed backup, want it unchanged (ready)", c.Status.Phase)
	}

	// etcd answers again: the retry after BackupRetryDelay takes a backup.
	snapshotServer(t, e.env, &url)
	e.clock.Add(BackupRetryDelay)
	b.pass(ctx)
	names := e.names(0)
	cond = e.backupCond()
	if len(names) != 1 || cond == nil || cond.Status != StatusTrue || cond.Reason != ReasonBackedUp || !strings.Contains(cond.Message, names[0]) {
		t.Fatalf("EtcdBackup after the recovery: %+v (snapshots %v), want True naming the new backup", cond, names)
	}

	// etcd stops answering: one missed interval is a failure, a failure
	// past two intervals since the newest backup is stale.
	url.Store("https://127.0.0.1:1")
	e.clock.Add(time.Hour)
	b.pass(ctx)
	if cond = e.backupCond(); cond.Status != StatusFalse || cond.Reason != ReasonBackupFailed || !strings.Contains(cond.Message, names[0]) {
		t.Fatalf("EtcdBackup one interval after the backup, etcd down: %+v, want False %s naming %s", cond, ReasonBackupFailed, names[0])
	}
	e.clock.Add(time.Hour + time.Second)
	b.pass(ctx)
	if cond = e.backupCond(); cond.Status != StatusFalse || cond.Reason != ReasonBackupStale || !strings.Contains(cond.Message, "node-11") {
		t.Fatalf("EtcdBackup past two intervals, etcd down: %+v, want False %s with the error", cond, ReasonBackupStale)
	}
	if c := mustCluster(t, e.env); c.Status.Phase != api.PhaseReady {
		t.Fatalf("phase %s with stale backups, want it unchanged (ready)", c.Status.Phase)
	}

	c := mustCluster(t, e.env)
	c.Spec.EtcdBackup = nil
	e.putCluster(c, api.PhaseReady)
	b.pass(ctx)
	if cond = e.backupCond(); cond != nil {
		t.Fatalf("EtcdBackup without a schedule: %+v, want none", cond)
	}
}

// TestBackupConditionBounds checks backupCondition at its bounds: a newest
// backup exactly BackupStaleIntervals intervals old is not stale, a second
// more is; nothing is said before the first backup or failure; another
// leader's failure stands until this leader's first attempt; the error
// text is clipped at MaxBackupErrorText.
func TestBackupConditionBounds(t *testing.T) {
	taken := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	newest := &apiv1.EtcdSnapshotInfo{Name: "lab/20261130T000000Z-scheduled", TakenAt: taken.Format(time.RFC3339), Member: "node-11"}
	ok := &backupAttempt{at: taken}
	at := taken.Add(BackupStaleIntervals * time.Hour)
	if c, _ := backupCondition(nil, newest, time.Hour, ok, at); c.Status != StatusTrue {
		t.Fatalf("at %d intervals: %+v, want True", BackupStaleIntervals, c)
	}
	if c, _ := backupCondition(nil, newest, time.Hour, ok, at.Add(time.Second)); c.Status != StatusFalse || c.Reason != ReasonBackupStale {
		t.Fatalf("a second past %d intervals: %+v, want False %s", BackupStaleIntervals, c, ReasonBackupStale)
	}
	if _, said := backupCondition(nil, nil, time.Hour, nil, at); said {
		t.Fatal("a condition before any backup or attempt")
	}
	prev := &api.Condition{Type: CondEtcdBackup, Status: StatusFalse, Reason: ReasonBackupFailed, Message: "from the last leader"}
	if c, _ := backupCondition(prev, newest, time.Hour, nil, taken.Add(time.Minute)); c.Message != prev.Message {
		t.Fatalf("another leader's failure replaced before an attempt: %+v", c)
	}
	long := &backupAttempt{at: at, err: errors.New(strings.Repeat("x", 2*MaxBackupErrorText))}
	if c, _ := backupCondition(nil, newest, time.Hour, long, at); len(c.Message) != MaxBackupErrorText || c.Reason != ReasonBackupFailed {
		t.Fatalf("message of %d bytes (%s), want clipped at %d", len(c.Message), c.Reason, MaxBackupErrorText)
	}
	short := &backupAttempt{at: at, err: errors.New(strings.Repeat("x", 10))}
	if c, _ := backupCondition(nil, newest, time.Hour, short, at); len(c.Message) >= MaxBackupErrorText || strings.HasSuffix(c.Message, "...") {
		t.Fatalf("a short message was clipped: %q", c.Message)
	}
}
