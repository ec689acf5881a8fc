package controller

import (
	"context"
	"log/slog"
	"time"

	"kcore.dev/kcore/pkg/etcdsnap"
)

// DefaultSnapshotCopyInterval is how often a replica copies the etcd
// snapshot files it lacks.
const DefaultSnapshotCopyInterval = 30 * time.Second

// snapshotCopyTimeout bounds one copy pass: every file it fetches, one at a
// time, as long as a snapshot may take to stream.
const snapshotCopyTimeout = etcdsnap.DefaultTimeout

// copySnapshots runs on every replica, leader or not: each
// SnapshotCopyInterval it copies the snapshot files the records name and
// this replica lacks from one that holds them (etcdsnap.CopyMissing), and
// removes its files no record keeps any more (etcdsnap.Files.Sweep). A
// backup so outlives the disk of the replica that took it, and a follower
// that becomes leader restores from its own copy.
func (c *Controller) copySnapshots() {
	defer c.wg.Done()
	select {
	case <-c.stop:
		return
	case <-c.joined:
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-c.stop
		cancel()
	}()
	files := c.snapshotFiles()
	tick := time.NewTicker(c.cfg.SnapshotCopyInterval)
	defer tick.Stop()
	var failing onceWarner
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		c.copyPass(ctx, files, &failing)
	}
}

// onceWarner logs a failure that repeats pass after pass once, and once
// more when it changes or ends, instead of at every pass.
type onceWarner struct{ last string }

// report logs err as msg when it differs from the last one reported, and
// that the failure ended when err is nil after one; it returns whether it
// logged.
func (w *onceWarner) report(log *slog.Logger, msg string, err error) bool {
	switch {
	case err == nil && w.last == "":
		return false
	case err == nil:
		w.last = ""
		log.Info(msg + ": no longer failing")
		return true
	case err.Error() == w.last:
		return false
	}
	w.last = err.Error()
	log.Warn(msg+" (repeats are not logged until the error changes)", "err", err)
	return true
}

// copyPass is one pass of copySnapshots; failing keeps a copy failure
// that repeats every pass (a file no replica can send) from filling the
// log.
func (c *Controller) copyPass(ctx context.Context, files *etcdsnap.Files, failing *onceWarner) {
	ctx, cancel := context.WithTimeout(ctx, snapshotCopyTimeout)
	defer cancel()
	st := c.node.State()
	copied, err := etcdsnap.CopyMissing(ctx, files, c.srv.FetchEtcdSnapshot, st)
	if len(copied) > 0 {
		c.log.Info("copied etcd snapshot files from other replicas", "snapshots", copied)
	}
	failing.report(c.log, "copy etcd snapshot files", err)
	if removed, err := files.Sweep(st, c.cfg.now()); err != nil {
		c.log.Warn("remove etcd snapshot files no record keeps", "err", err)
	} else if len(removed) > 0 {
		c.log.Info("removed etcd snapshot files no record keeps", "snapshots", removed)
	}
}
