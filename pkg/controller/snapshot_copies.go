package controller

import (
	"context"
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
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		c.copyPass(ctx, files)
	}
}

// copyPass is one pass of copySnapshots.
func (c *Controller) copyPass(ctx context.Context, files *etcdsnap.Files) {
	ctx, cancel := context.WithTimeout(ctx, snapshotCopyTimeout)
	defer cancel()
	st := c.node.State()
	copied, err := etcdsnap.CopyMissing(ctx, files, c.srv.FetchEtcdSnapshot, st)
	if len(copied) > 0 {
		c.log.Info("copied etcd snapshot files from other replicas", "snapshots", copied)
	}
	if err != nil {
		c.log.Warn("copy etcd snapshot files", "err", err)
	}
	if removed, err := files.Sweep(st, c.cfg.now()); err != nil {
		c.log.Warn("remove etcd snapshot files no record keeps", "err", err)
	} else if len(removed) > 0 {
		c.log.Info("removed etcd snapshot files no record keeps", "snapshots", removed)
	}
}
