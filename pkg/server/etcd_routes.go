package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/store"
)

// storedCluster returns the cluster {name} of the call with its object.
func (s *Server) storedCluster(c *call) (*api.KubernetesCluster, store.Object, error) {
	name := c.r.PathValue("name")
	obj, ok := s.backend.State().Get(api.KindKubernetesCluster, name)
	if !ok {
		return nil, store.Object{}, notFound("cluster %q not found", name)
	}
	var kc api.KubernetesCluster
	if err := json.Unmarshal(obj.Data, &kc); err != nil {
		return nil, store.Object{}, fmt.Errorf("decode cluster %s: %w", name, err)
	}
	return &kc, obj, nil
}

// takeEtcdSnapshot answers POST /v1/clusters/{name}/etcd/snapshots: the
// leader streams a snapshot from the cluster's etcd and stores it sealed
// (the cluster's oldest beyond etcdsnap.DefaultKeep deleted), with the
// call's audit entry in the same raft entry.
func (s *Server) takeEtcdSnapshot(c *call) (any, error) {
	var req apiv1.EtcdSnapshotRequest
	body, err := io.ReadAll(c.r.Body)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeStrict(bytes.NewReader(body), &req); err != nil {
			return nil, err
		}
	}
	kc, _, err := s.storedCluster(c)
	if err != nil {
		return nil, err
	}
	if kc.Status.Phase == api.PhaseDeleting {
		return nil, newError(apiv1.CodeConflict, "cluster %q is being deleted", kc.Metadata.Name)
	}
	st := s.backend.State()
	sec, err := etcdsnap.OpenClusterSecrets(s.keyring, st, kc.Metadata.Name)
	if errors.Is(err, etcdsnap.ErrNotFound) {
		return nil, newError(apiv1.CodeConflict, "cluster %q has no PKI yet: it has not bootstrapped", kc.Metadata.Name)
	}
	if err != nil {
		return nil, err
	}
	snap, err := (&etcdsnap.Taker{}).Take(c.r.Context(), kc, sec)
	if err != nil {
		return nil, newError(apiv1.CodeConflict, "%v", err)
	}
	return s.keepEtcdSnapshot(c, kc.Metadata.Name, snap, req.Reason)
}

// keepEtcdSnapshot stores snap of cluster for reason, as a verified file on
// this replica (metadata in raft) when files are configured, else sealed
// in raft, with the call's audit entry and the retention of its class in
// the same raft entry; the dropped snapshots' local files go afterwards.
func (s *Server) keepEtcdSnapshot(c *call, cluster string, snap *etcdsnap.Snapshot, reason string) (any, error) {
	st := s.backend.State()
	var info apiv1.EtcdSnapshotInfo
	var ops []store.Op
	var dropped []apiv1.EtcdSnapshotInfo
	if s.snapFiles != nil {
		res, err := etcdsnap.StoreFile(s.snapFiles, s.backend.ID(), st, cluster, snap, reason, s.now(), etcdsnap.DefaultKeep, 0)
		if err != nil {
			return nil, err
		}
		info, ops, dropped = res.Info, res.Ops, res.Dropped
	} else {
		var err error
		if info, ops, err = etcdsnap.Ops(s.keyring, st, cluster, snap, reason, s.now(), etcdsnap.DefaultKeep); err != nil {
			return nil, err
		}
	}
	entry, err := s.auditEntry(c, http.StatusOK, "")
	if err != nil {
		return nil, fmt.Errorf("encode audit entry: %w", err)
	}
	if _, err := s.apply(c.r.Context(), store.Batch{Ops: ops, Audit: &store.AppendAudit{Entry: entry}}); err != nil {
		if s.snapFiles != nil {
			_ = s.snapFiles.Remove(info.Name)
		}
		return nil, err
	}
	c.skipAudit = true
	for _, d := range dropped {
		if d.Location == apiv1.EtcdSnapshotOnController {
			if err := s.snapFiles.Remove(d.Name); err != nil {
				s.log.Warn("remove dropped etcd snapshot file", "snapshot", d.Name, "err", err)
			}
		}
	}
	return info, nil
}

// listEtcdSnapshots answers GET /v1/clusters/{name}/etcd/snapshots with the
// metadata of the cluster's stored snapshots, oldest first; never their
// content.
func (s *Server) listEtcdSnapshots(c *call) (any, error) {
	idx, err := s.block(c, apiv1.KindEtcdSnapshot, "")
	if err != nil {
		return nil, err
	}
	out, err := etcdsnap.List(s.backend.State(), c.r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	setIndex(c.w, idx)
	return out, nil
}

// restoreEtcd answers POST /v1/clusters/{name}/etcd/restore: it records
// the restore request in the cluster's status (CAS on the cluster) and sets
// the phase to updating; the orchestrator does the restore. It refuses an
// unknown snapshot, a cluster being deleted and a second restore while one
// runs. When another write to the cluster got in between its read and its
// put, it reads again and tries again (retryCAS).
func (s *Server) restoreEtcd(c *call) (any, error) {
	var req apiv1.EtcdRestoreRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	return retryCAS(c, func() (any, error) {
		kc, obj, err := s.storedCluster(c)
		if err != nil {
			return nil, err
		}
		op, resp, err := restoreRequest(s.backend.State(), kc, obj, req.Snapshot, c.subject(), s.now())
		if err != nil {
			return nil, err
		}
		if resp.Index, err = s.applyAudited(c, op); err != nil {
			return nil, err
		}
		return resp, nil
	})
}

// restoreRequest is the CAS put that records a restore of kc from snapshot
// requested by subject at now.
func restoreRequest(st *store.State, kc *api.KubernetesCluster, obj store.Object, snapshot, subject string, now time.Time) (store.Op, apiv1.EtcdRestoreResponse, error) {
	name := kc.Metadata.Name
	if snapshot == "" {
		return store.Op{}, apiv1.EtcdRestoreResponse{}, badRequest("name the snapshot to restore (kctl kubernetes etcd snapshots %s lists them)", name)
	}
	full := etcdsnap.FullName(name, snapshot)
	if _, err := etcdsnap.Lookup(st, full); err != nil {
		if errors.Is(err, etcdsnap.ErrNotFound) {
			return store.Op{}, apiv1.EtcdRestoreResponse{}, notFound("etcd snapshot %q of cluster %q not found", snapshot, name)
		}
		return store.Op{}, apiv1.EtcdRestoreResponse{}, err
	}
	switch {
	case kc.Status.Phase == api.PhaseDeleting:
		return store.Op{}, apiv1.EtcdRestoreResponse{}, newError(apiv1.CodeConflict, "cluster %q is being deleted", name)
	case kc.Status.EtcdRestore != nil:
		return store.Op{}, apiv1.EtcdRestoreResponse{}, newError(apiv1.CodeConflict, "cluster %q is already restoring etcd from %s", name, kc.Status.EtcdRestore.Snapshot)
	}
	gen := kc.Status.EtcdGeneration + 1
	nc := *kc
	nc.Status.EtcdRestore = &api.EtcdRestore{
		Snapshot: full, Generation: gen, Phase: api.EtcdRestorePhaseRestoring,
		RequestedBy: subject, StartedAt: now.UTC().Format(time.RFC3339),
	}
	nc.Status.Phase = api.PhaseUpdating
	data, err := json.Marshal(&nc)
	if err != nil {
		return store.Op{}, apiv1.EtcdRestoreResponse{}, fmt.Errorf("encode cluster %s: %w", name, err)
	}
	op := store.Op{Put: &store.Put{Kind: api.KindKubernetesCluster, Name: name, Data: data, ExpectModifyIndex: store.Expect(obj.ModifyIndex)}}
	return op, apiv1.EtcdRestoreResponse{Snapshot: full, Generation: gen}, nil
}
