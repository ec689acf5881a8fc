package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
)

// MaxEtcdSnapshotBody is the request body limit of an etcd snapshot import:
// the largest snapshot a take accepts.
const MaxEtcdSnapshotBody = etcdsnap.DefaultMaxSize

// MaxEtcdSnapshotFile bounds a sealed snapshot file fetched from another
// replica: the gzip of the largest snapshot, sealed, in JSON (base64).
const MaxEtcdSnapshotFile = etcdsnap.DefaultMaxSize * 3 / 2

// etcdSnapshotName is the stored name of the {snapshot} of cluster {name}.
func etcdSnapshotName(c *call) string {
	return etcdsnap.FullName(c.r.PathValue("name"), c.r.PathValue("snapshot"))
}

// exportEtcdSnapshot answers GET /v1/clusters/{name}/etcd/snapshots/{snapshot}
// with the snapshot's content, the etcd database file, and its metadata in
// the HeaderEtcdSnapshot header. The leader answers; a snapshot file it
// does not hold is fetched from a replica that does first.
func (s *Server) exportEtcdSnapshot(c *call) (any, error) {
	name := etcdSnapshotName(c)
	info, gz, err := s.openEtcdSnapshot(c.r.Context(), name)
	if err != nil {
		return nil, err
	}
	raw, err := etcdsnap.Decompress(gz)
	if err != nil {
		return nil, err
	}
	meta, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	c.wrote = true
	c.w.Header().Set("Content-Type", apiv1.ContentTypeEtcdSnapshot)
	c.w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	c.w.Header().Set(apiv1.HeaderEtcdSnapshot, string(meta))
	c.w.WriteHeader(http.StatusOK)
	if _, err := c.w.Write(raw); err != nil {
		s.log.Warn("send etcd snapshot", "snapshot", name, "err", err)
	}
	return nil, nil
}

// openEtcdSnapshot opens name from raft or this replica's file, fetching
// the file from a replica that holds it when this one does not.
func (s *Server) openEtcdSnapshot(ctx context.Context, name string) (apiv1.EtcdSnapshotInfo, []byte, error) {
	st := s.backend.State()
	info, gz, err := etcdsnap.OpenWith(s.snapFiles, s.keyring, st, name)
	switch {
	case errors.Is(err, etcdsnap.ErrNotFound):
		return info, nil, notFound("etcd snapshot %q not found", name)
	case !errors.Is(err, etcdsnap.ErrNotLocal) || s.snapFiles == nil:
		return info, gz, err
	}
	if info, err = etcdsnap.Lookup(st, name); err != nil {
		return info, nil, err
	}
	if err := etcdsnap.KeepFetched(ctx, s.snapFiles, s.FetchEtcdSnapshot, info); err != nil {
		return info, nil, newError(apiv1.CodeConflict, "etcd snapshot %s: no replica sent a copy that opens: %v", name, err)
	}
	return etcdsnap.OpenWith(s.snapFiles, s.keyring, st, name)
}

// etcdSnapshotFile answers GET /v1/clusters/{name}/etcd/snapshots/{snapshot}/file
// for another replica: this replica's sealed file of the snapshot as
// stored (it opens only under the controllers' key), 404 when it holds none.
func (s *Server) etcdSnapshotFile(c *call) (any, error) {
	if s.snapFiles == nil {
		return nil, notFound("this replica keeps no etcd snapshot files")
	}
	data, err := s.snapFiles.ReadSealed(etcdSnapshotName(c))
	if errors.Is(err, etcdsnap.ErrNotLocal) || errors.Is(err, etcdsnap.ErrNotFound) {
		return nil, notFound("%v", err)
	}
	if err != nil {
		return nil, err
	}
	c.wrote = true
	c.w.Header().Set("Content-Type", "application/octet-stream")
	c.w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	c.w.WriteHeader(http.StatusOK)
	if _, err := c.w.Write(data); err != nil {
		s.log.Warn("send etcd snapshot file", "err", err)
	}
	return nil, nil
}

// FetchEtcdSnapshot returns the sealed file of snapshot name from the first
// replica that sends it, over the controllers' mutual TLS: those in replicas
// (raft ids, the record's holders) first, then every other member, since
// each replica keeps copies (etcdsnap.CopyMissing).
func (s *Server) FetchEtcdSnapshot(ctx context.Context, name string, replicas []string) ([]byte, error) {
	if s.forwarder == nil {
		return nil, errors.New("fetch etcd snapshot: no replica client configured")
	}
	ask := slices.Clone(replicas)
	if peers, err := s.backend.Peers(ctx); err == nil {
		for _, p := range peers {
			if !slices.Contains(ask, p.ID) && p.ID != s.backend.ID() {
				ask = append(ask, p.ID)
			}
		}
	}
	var errs []error
	for _, id := range ask {
		addr := s.memberHTTP(id)
		if addr == "" || id == s.backend.ID() {
			errs = append(errs, fmt.Errorf("%s: no API address recorded", id))
			continue
		}
		data, err := s.fetchFile(ctx, addr, name)
		if err == nil {
			return data, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", id, err))
	}
	return nil, fmt.Errorf("fetch etcd snapshot %s: %w", name, errors.Join(errs...))
}

func (s *Server) fetchFile(ctx context.Context, addr, name string) ([]byte, error) {
	cluster, short, _ := cutName(name)
	url := "https://" + addr + apiv1.EtcdSnapshotPath(cluster, short) + "/file"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.forwarder.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxEtcdSnapshotFile+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if len(data) > MaxEtcdSnapshotFile {
		return nil, fmt.Errorf("GET %s: over %d bytes", url, MaxEtcdSnapshotFile)
	}
	return data, nil
}

// importEtcdSnapshot answers POST /v1/clusters/{name}/etcd/snapshots/import:
// the body is an etcd database file (an exported snapshot); it is verified
// like a snapshot the leader takes and kept as one with reason imported, so
// `etcd restore` can restore it.
func (s *Server) importEtcdSnapshot(c *call) (any, error) {
	kc, _, err := s.storedCluster(c)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(c.r.Body)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, badRequest("the body is empty: send the etcd snapshot file")
	}
	rev, err := etcdsnap.Verify(data, "")
	if err != nil {
		return nil, badRequest("not an etcd snapshot: %v", err)
	}
	sum := sha256.Sum256(data)
	snap := &etcdsnap.Snapshot{Data: data, Member: "import by " + c.subject(), SHA256: hex.EncodeToString(sum[:]), Revision: rev}
	return s.keepEtcdSnapshot(c, kc.Metadata.Name, snap, etcdsnap.ReasonImported)
}

// cutName splits a stored snapshot name into its cluster and the rest.
func cutName(name string) (string, string, bool) {
	for i := range len(name) {
		if name[i] == '/' {
			return name[:i], name[i+1:], true
		}
	}
	return name, "", false
}
