package orchestrator

import (
	"context"
	"fmt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
)

// takeEtcdSnapshot takes an etcd snapshot of c from the first control plane
// that answers and returns its name. With cfg.Backups it is kept as a file
// on this replica and raft records only its metadata; without, it is stored
// sealed through raft as an EtcdSnapshot. Either way the cluster's oldest
// unscheduled snapshots beyond etcdsnap.DefaultKeep are deleted in the same
// batch.
func (o *Orchestrator) takeEtcdSnapshot(ctx context.Context, c *api.KubernetesCluster, sec *pki.ClusterSecrets, reason string) (string, error) {
	if o.cfg.Backups != nil {
		info, err := o.storeSnapshotFile(ctx, c, sec, reason, etcdsnap.DefaultKeep, 0)
		if err != nil {
			return "", err
		}
		o.log.Info("etcd snapshot stored", "cluster", c.Metadata.Name, "snapshot", info.Name,
			"member", info.Member, "bytes", info.SizeBytes, "revision", info.Revision, "sha256", info.SHA256)
		return info.Name, nil
	}
	snap, err := o.takeSnapshot(ctx, c, sec)
	if err != nil {
		return "", err
	}
	now := o.cfg.Now()
	info, ops, err := etcdsnap.Ops(o.cfg.Keyring, o.cfg.Node.State(), c.Metadata.Name, snap, reason, now, etcdsnap.DefaultKeep)
	if err != nil {
		return "", err
	}
	if err := o.apply(ctx, ops, now); err != nil {
		return "", fmt.Errorf("store etcd snapshot %s: %w", info.Name, err)
	}
	o.log.Info("etcd snapshot stored", "cluster", c.Metadata.Name, "snapshot", info.Name,
		"member", info.Member, "bytes", info.SizeBytes, "stored_bytes", info.StoredBytes, "revision", info.Revision)
	return info.Name, nil
}

// snapshotTaker reaches etcd where the membership client does (tests point
// HTTPEtcd.EtcdEndpoint at a fake).
func (o *Orchestrator) snapshotTaker() *etcdsnap.Taker {
	t := &etcdsnap.Taker{}
	if h, ok := o.cfg.Etcd.(*HTTPEtcd); ok {
		t.Endpoint = h.EtcdEndpoint
	}
	return t
}
