package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// etcdSnapshotExtra is the time a snapshot may take besides the client's
// timeout: the leader streams it from etcd and commits it.
const etcdSnapshotExtra = 2 * time.Minute

// ErrChecksum means an exported snapshot is not the one the controller
// recorded (size or SHA-256 differ).
var ErrChecksum = errors.New("etcd snapshot checksum mismatch")

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

// ExportEtcdSnapshot streams the stored etcd snapshot of cluster (with or
// without its "<cluster>/" prefix) to w, as the etcd database file
// etcdutl snapshot restore reads, and returns its metadata. The content is
// checked against the SHA-256 the controller recorded when it was taken;
// a mismatch fails with an error after w got the bytes.
func (c *Client) ExportEtcdSnapshot(ctx context.Context, cluster, snapshot string, w io.Writer) (apiv1.EtcdSnapshotInfo, error) {
	short := strings.TrimPrefix(snapshot, cluster+"/")
	resp, err := c.send(ctx, request{method: http.MethodGet, path: apiv1.EtcdSnapshotPath(cluster, short), extra: etcdSnapshotExtra})
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, err
	}
	defer resp.close()
	var info apiv1.EtcdSnapshotInfo
	if err := json.Unmarshal([]byte(resp.header.Get(apiv1.HeaderEtcdSnapshot)), &info); err != nil {
		return apiv1.EtcdSnapshotInfo{}, fmt.Errorf("export etcd snapshot %s: decode %s: %w", snapshot, apiv1.HeaderEtcdSnapshot, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), resp.body)
	if err != nil {
		return info, fmt.Errorf("export etcd snapshot %s from %s: %w", snapshot, resp.addr, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != info.SHA256 || n != info.SizeBytes {
		return info, fmt.Errorf("export etcd snapshot %s: %w: got %d bytes with sha256 %s, want %d bytes with %s", snapshot, ErrChecksum, n, got, info.SizeBytes, info.SHA256)
	}
	return info, nil
}

// ImportEtcdSnapshot uploads an etcd database file (an exported snapshot,
// or one etcdutl saved) as a snapshot of cluster; the controller verifies
// it and keeps it like one it took. It returns its metadata.
func (c *Client) ImportEtcdSnapshot(ctx context.Context, cluster string, r io.Reader) (apiv1.EtcdSnapshotInfo, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, fmt.Errorf("read etcd snapshot: %w", err)
	}
	req := request{method: http.MethodPost, path: apiv1.EtcdSnapshotImportPath(cluster), body: data, contentType: apiv1.ContentTypeEtcdSnapshot, extra: etcdSnapshotExtra}
	resp, err := c.send(ctx, req)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, err
	}
	defer resp.close()
	var info apiv1.EtcdSnapshotInfo
	if err := json.NewDecoder(resp.body).Decode(&info); err != nil {
		return apiv1.EtcdSnapshotInfo{}, fmt.Errorf("import etcd snapshot: decode answer: %w", err)
	}
	return info, nil
}
