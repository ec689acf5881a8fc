package client

import (
	"context"
	"net/http"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// etcdSnapshotExtra is the time a snapshot may take besides the client's
// timeout: the leader streams it from etcd and commits it.
const etcdSnapshotExtra = 2 * time.Minute

// TakeEtcdSnapshot asks the leader to take an etcd snapshot of cluster now
// and store it with reason (empty: manual); it returns its metadata.
func (c *Client) TakeEtcdSnapshot(ctx context.Context, cluster, reason string) (apiv1.EtcdSnapshotInfo, error) {
	var out apiv1.EtcdSnapshotInfo
	req := request{method: http.MethodPost, path: apiv1.EtcdSnapshotsPath(cluster), extra: etcdSnapshotExtra}
	if _, err := c.call(ctx, req, apiv1.EtcdSnapshotRequest{Reason: reason}, &out); err != nil {
		return apiv1.EtcdSnapshotInfo{}, err
	}
	return out, nil
}

// EtcdSnapshots lists the metadata of cluster's stored etcd snapshots,
// oldest first.
func (c *Client) EtcdSnapshots(ctx context.Context, cluster string) ([]apiv1.EtcdSnapshotInfo, error) {
	var out []apiv1.EtcdSnapshotInfo
	if _, err := c.call(ctx, request{method: http.MethodGet, path: apiv1.EtcdSnapshotsPath(cluster)}, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// RestoreEtcd records a request to restore cluster's etcd from the stored
// snapshot (with or without its "<cluster>/" prefix); the orchestrator
// does the restore and the cluster's status follows it.
func (c *Client) RestoreEtcd(ctx context.Context, cluster, snapshot string) (apiv1.EtcdRestoreResponse, error) {
	var out apiv1.EtcdRestoreResponse
	req := request{method: http.MethodPost, path: apiv1.EtcdRestorePath(cluster)}
	if _, err := c.call(ctx, req, apiv1.EtcdRestoreRequest{Snapshot: snapshot}, &out); err != nil {
		return apiv1.EtcdRestoreResponse{}, err
	}
	return out, nil
}
