package apiv1

import "net/url"

// KindEtcdSnapshot holds etcd snapshots of the Kubernetes clusters, name
// "<cluster>/<taken, UTC>-<reason>": the metadata in clear (EtcdSnapshotInfo)
// and the gzipped snapshot sealed under the controller key, because it
// holds the cluster's Kubernetes Secrets.
const KindEtcdSnapshot = "EtcdSnapshot"

// PathClusters is the prefix of the per-cluster routes.
const PathClusters = "/v1/clusters/"

// EtcdSnapshotsPath returns /v1/clusters/{name}/etcd/snapshots.
func EtcdSnapshotsPath(cluster string) string {
	return PathClusters + url.PathEscape(cluster) + "/etcd/snapshots"
}

// EtcdRestorePath returns /v1/clusters/{name}/etcd/restore.
func EtcdRestorePath(cluster string) string {
	return PathClusters + url.PathEscape(cluster) + "/etcd/restore"
}

// EtcdSnapshotInfo describes one stored etcd snapshot without its content.
type EtcdSnapshotInfo struct {
	// Name is the stored object's name, <cluster>/<taken>-<reason>.
	Name string `json:"name"`
	// Cluster is the KubernetesCluster the snapshot was taken of.
	Cluster string `json:"cluster"`
	// TakenAt is when the snapshot was taken, RFC 3339 UTC.
	TakenAt string `json:"takenAt"`
	// Reason says why it was taken (manual, before ClusterUpdate u1, …).
	Reason string `json:"reason"`
	// Member is the control plane whose etcd served the snapshot.
	Member string `json:"member"`
	// SizeBytes is the size of the snapshot (the etcd database file).
	SizeBytes int64 `json:"sizeBytes"`
	// StoredBytes is the size of the gzipped snapshot as stored.
	StoredBytes int64 `json:"storedBytes"`
	// SHA256 is the hex SHA-256 of the snapshot.
	SHA256 string `json:"sha256"`
	// Revision is the etcd revision the snapshot holds.
	Revision int64 `json:"revision"`
	// Location is where the content is kept: EtcdSnapshotInRaft (sealed
	// inside the replicated store, snapshots taken before files existed) or
	// EtcdSnapshotOnController (a sealed file in a replica's data directory).
	Location string `json:"location,omitempty"`
	// Replicas are the raft ids of the controller replicas that hold the
	// file of a snapshot kept on the controller.
	Replicas []string `json:"replicas,omitempty"`
}

// Locations of an etcd snapshot's content.
const (
	// EtcdSnapshotInRaft: sealed inside the EtcdSnapshot object (read only).
	EtcdSnapshotInRaft = "raft"
	// EtcdSnapshotOnController: a sealed file on the replicas it names.
	EtcdSnapshotOnController = "controller"
)

// EtcdSnapshotPath returns /v1/clusters/{name}/etcd/snapshots/{snapshot},
// the snapshot's content (snapshot without its "<cluster>/" prefix).
func EtcdSnapshotPath(cluster, snapshot string) string {
	return EtcdSnapshotsPath(cluster) + "/" + url.PathEscape(snapshot)
}

// EtcdSnapshotImportPath returns /v1/clusters/{name}/etcd/snapshots/import.
func EtcdSnapshotImportPath(cluster string) string {
	return EtcdSnapshotsPath(cluster) + "/import"
}

// HeaderEtcdSnapshot carries the JSON EtcdSnapshotInfo of an exported
// snapshot, so the client checks the content against the recorded SHA-256.
const HeaderEtcdSnapshot = "X-Kcore-Etcd-Snapshot"

// ContentTypeEtcdSnapshot is the media type of an exported etcd snapshot:
// the etcd database file, as etcdutl snapshot restore reads it.
const ContentTypeEtcdSnapshot = "application/vnd.etcd.snapshot"

// EtcdSnapshotRequest is the body of POST /v1/clusters/{name}/etcd/snapshots.
type EtcdSnapshotRequest struct {
	// Reason is recorded with the snapshot and ends its name; default manual.
	Reason string `json:"reason,omitempty"`
}

// EtcdRestoreRequest is the body of POST /v1/clusters/{name}/etcd/restore.
type EtcdRestoreRequest struct {
	// Snapshot names the stored snapshot, with or without the "<cluster>/" prefix.
	Snapshot string `json:"snapshot"`
}

// EtcdRestoreResponse answers a recorded restore request.
type EtcdRestoreResponse struct {
	// Index is the raft index the request was committed at.
	Index uint64 `json:"index"`
	// Snapshot is the full name of the snapshot being restored.
	Snapshot string `json:"snapshot"`
	// Generation is the etcd generation the restore creates.
	Generation int `json:"generation"`
}

// KubeconfigPath returns /v1/clusters/{name}/kubeconfig.
func KubeconfigPath(cluster string) string {
	return PathClusters + url.PathEscape(cluster) + "/kubeconfig"
}
