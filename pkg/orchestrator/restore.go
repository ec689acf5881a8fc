package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/store"
)

// CondEtcdRestored reports the last etcd restore: Unknown while one runs,
// True once every control plane runs etcd on the restored data and the
// cluster is healthy, False when it could not start.
const CondEtcdRestored = "EtcdRestored"

// restoreAuditRoute names the orchestrator's audit entries of a finished restore.
const restoreAuditRoute = "orchestrator etcd restore"

// restoreInput returns the gzipped snapshot of the restore c's status asks
// for, for render.Options.EtcdRestoreSnapshot (nil when none is in
// progress). A snapshot that cannot be opened ends the restore: status
// loses it and CondEtcdRestored turns False with the reason.
func (o *Orchestrator) restoreInput(c *api.KubernetesCluster, status *api.ClusterStatus, now time.Time) []byte {
	rs := status.EtcdRestore
	if rs == nil {
		return nil
	}
	gz, err := o.openSnapshot(rs.Snapshot)
	if err == nil {
		status.Conditions = setCondition(status.Conditions, api.Condition{
			Type: CondEtcdRestored, Status: StatusUnknown, Reason: "Restoring",
			Message: fmt.Sprintf("restoring etcd generation %d from %s on every control plane", rs.Generation, rs.Snapshot),
		}, now)
		return gz
	}
	o.log.Error("etcd restore cannot start", "cluster", c.Metadata.Name, "snapshot", rs.Snapshot, "err", err)
	status.EtcdRestore = nil
	status.Conditions = setCondition(status.Conditions, api.Condition{
		Type: CondEtcdRestored, Status: StatusFalse, Reason: "SnapshotUnreadable",
		Message: fmt.Sprintf("restore from %s abandoned: %v", rs.Snapshot, err),
	}, now)
	return nil
}

// openSnapshot returns the gzipped content of the stored snapshot name:
// from raft for a snapshot kept there, from this replica's file, or from a
// replica that holds the file (kept here afterwards).
func (o *Orchestrator) openSnapshot(name string) ([]byte, error) {
	st := o.cfg.Node.State()
	_, gz, err := etcdsnap.OpenWith(o.cfg.Backups, o.cfg.Keyring, st, name)
	if !errors.Is(err, etcdsnap.ErrNotLocal) || o.cfg.Backups == nil || o.cfg.FetchSnapshot == nil {
		return gz, err
	}
	info, err := etcdsnap.Lookup(st, name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), etcdsnap.DefaultTimeout)
	defer cancel()
	if err := etcdsnap.KeepFetched(ctx, o.cfg.Backups, o.cfg.FetchSnapshot, info); err != nil {
		return nil, fmt.Errorf("fetch etcd snapshot %s: %w", name, err)
	}
	_, gz, err = etcdsnap.OpenWith(o.cfg.Backups, o.cfg.Keyring, st, name)
	return gz, err
}

// finishRestore ends the restore in progress once the cluster is ready
// again: the phase is computed ready only when every member applied the
// state that carries the restore and etcd and the API are healthy. The
// generation is recorded, the restore removed and CondEtcdRestored set; it
// returns the restore that finished (nil when none did) for the audit.
func (o *Orchestrator) finishRestore(c *api.KubernetesCluster, status *api.ClusterStatus, now time.Time) *api.EtcdRestore {
	rs := status.EtcdRestore
	if rs == nil || status.Phase != api.PhaseReady {
		return nil
	}
	took := "?"
	if t, err := time.Parse(time.RFC3339, rs.StartedAt); err == nil {
		took = now.Sub(t).Round(time.Second).String()
	}
	status.EtcdGeneration = rs.Generation
	status.EtcdRestore = nil
	status.Conditions = setCondition(status.Conditions, api.Condition{
		Type: CondEtcdRestored, Status: StatusTrue, Reason: "Restored",
		Message: fmt.Sprintf("etcd generation %d restored from %s on every control plane, ready %s after the request", rs.Generation, rs.Snapshot, took),
	}, now)
	o.log.Info("etcd restore finished", "cluster", c.Metadata.Name, "snapshot", rs.Snapshot, "generation", rs.Generation, "took", took)
	return rs
}

// auditRestore records a finished restore in the audit log.
func (o *Orchestrator) auditRestore(ctx context.Context, c *api.KubernetesCluster, rs *api.EtcdRestore, now time.Time) {
	if rs == nil {
		return
	}
	entry, err := json.Marshal(apiv1.AuditEntry{
		Time: now.UTC().Format(time.RFC3339Nano), ID: fmt.Sprintf("etcd-restore-%s-%d", c.Metadata.Name, rs.Generation),
		Subject: "orchestrator", Role: apiv1.RoleController, Method: "RESTORE", Route: restoreAuditRoute,
		Object: api.KindKubernetesCluster + "/" + c.Metadata.Name, Result: 200,
	})
	if err != nil {
		o.log.Warn("encode etcd restore audit entry", "err", err)
		return
	}
	cmd, err := store.AppendAudit{Entry: entry}.Command()
	if err == nil {
		cmd.Time = now.UTC().Format(time.RFC3339Nano)
		_, err = o.cfg.Node.Apply(ctx, cmd)
	}
	if err != nil {
		o.log.Warn("audit etcd restore", "cluster", c.Metadata.Name, "err", err)
	}
}
