package render

import (
	"encoding/base64"
	"fmt"
	"strconv"

	"kcore.dev/kcore/pkg/api"
)

// EtcdRestoreDir holds what etcd restores create: the snapshot and the data
// directory of each generation.
const EtcdRestoreDir = "/var/lib/etcd-restore"

// UnitEtcdRestore restores the etcd snapshot into a new data directory.
const UnitEtcdRestore = "kcore-etcd-restore"

// EtcdRestoreSnapshotPath is where a restore's snapshot is written on every
// control plane of a cluster in the primary slot (Layout.EtcdRestoreSnapshot
// in any slot).
func EtcdRestoreSnapshotPath(gen int) string {
	return PrimaryLayout().EtcdRestoreSnapshot(gen)
}

// etcdGeneration is the etcd generation the nodes run: the one a restore in
// progress creates, else the cluster's recorded one.
func (r *renderer) etcdGeneration() int {
	if rs := r.c.Status.EtcdRestore; rs != nil && rs.Generation > r.c.Status.EtcdGeneration {
		return rs.Generation
	}
	return r.c.Status.EtcdGeneration
}

// restoring is the restore whose snapshot this render carries, nil when
// none is in progress (or the caller passed no snapshot).
func (r *renderer) restoring() *api.EtcdRestore {
	rs := r.c.Status.EtcdRestore
	if rs == nil || len(r.opts.EtcdRestoreSnapshot) == 0 {
		return nil
	}
	return rs
}

// etcdDataDir is etcd's data directory for generation gen: Options'
// EtcdDataDir (with the layout's suffix) at 0, the layout's
// EtcdRestoreDir/<gen>/data after a restore.
func (r *renderer) etcdDataDir(gen int) string {
	if gen == 0 {
		return r.opts.EtcdDataDir + r.l.EtcdDataSuffix
	}
	return r.l.EtcdRestoreDir + "/" + strconv.Itoa(gen) + "/data"
}

// etcdGenerationExtra is the extra hash input of the units that must
// restart when etcd is restored (nothing before the first restore, so
// clusters that never restored keep their hashes).
func (r *renderer) etcdGenerationExtra() []string {
	if g := r.etcdGeneration(); g > 0 {
		return []string{"etcd-generation=" + strconv.Itoa(g)}
	}
	return nil
}

// etcdRestore renders, while a restore is in progress, the snapshot (gzip,
// sealed as a secret file) and the oneshot that restores it into the new
// generation's data directory with etcd's multi-member recovery: every
// control plane restores the same snapshot with the same member list and a
// token of its own, so the members start as one new cluster. It returns
// the unit etcd must start after, "" when no restore is in progress.
func (r *renderer) etcdRestore(b *builder, m api.ClusterNode, initial string) (string, error) {
	rs := r.restoring()
	if rs == nil {
		return "", nil
	}
	if rs.Generation <= 0 {
		return "", fmt.Errorf("render etcd restore: generation %d: %w", rs.Generation, ErrInvalid)
	}
	snap := r.l.EtcdRestoreSnapshot(rs.Generation)
	b.files[snap] = api.File{
		Path: snap, Mode: 0o600, Secret: true, Encoding: api.EncodingGzipBase64, Reason: "etcd snapshot to restore",
		Content: base64.StdEncoding.EncodeToString(r.opts.EtcdRestoreSnapshot),
	}
	b.units = append(b.units, pendingUnit{
		unit: api.Unit{
			Name:   r.l.UnitEtcdRestore,
			Reason: "restore etcd from the snapshot",
			Argv: []string{
				"etcdutl", "snapshot", "restore", snap,
				"--name=" + m.NodeID,
				"--initial-cluster=" + initial,
				"--initial-cluster-token=" + r.c.Metadata.Name + "-restore-" + strconv.Itoa(rs.Generation),
				"--initial-advertise-peer-urls=" + urlFor(m.AdvertiseAddress, r.l.EtcdPeerPort),
				"--data-dir=" + r.etcdDataDir(rs.Generation),
			},
			Oneshot: true,
			Restart: api.RestartNever,
		},
		reads: []string{snap},
		extra: []string{"etcd-generation=" + strconv.Itoa(rs.Generation)},
	})
	return r.l.UnitEtcdRestore, nil
}
