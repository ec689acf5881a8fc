package orchestrator

import (
	"context"
	"fmt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
)

// takeEtcdSnapshot takes an etcd snapshot of c from the first control plane
// that answers, stores it sealed through raft as an EtcdSnapshot (the
// cluster's oldest beyond etcdsnap.DefaultKeep deleted in the same batch)
// and returns its name.
func (o *Orchestrator) takeEtcdSnapshot(ctx context.Context, c *api.KubernetesCluster, sec *pki.ClusterSecrets, reason string) (string, error) {
	snap, err := o.snapshotTaker().Take(ctx, c, sec)
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
