package etcdsnap

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/store"
)

// DefaultKeep is how many snapshots per cluster Ops keeps by default.
const DefaultKeep = 5

// ReasonManual is the reason of a snapshot an operator asked for.
const ReasonManual = "manual"

// ErrNotFound means no such snapshot is stored.
var ErrNotFound = errors.New("etcd snapshot not found")

// Stored is the data of an EtcdSnapshot object: the metadata in clear and
// the gzipped snapshot sealed for (EtcdSnapshot, name).
type Stored struct {
	apiv1.EtcdSnapshotInfo
	// Content is the sealed gzip of the snapshot; empty for a snapshot
	// kept as a file (Location EtcdSnapshotOnController).
	Content store.Sealed `json:"content,omitzero"`
}

// Name is the object name of a snapshot of cluster taken at with reason:
// <cluster>/<YYYYMMDDThhmmssZ>-<reason as a DNS label>, so a cluster's
// snapshots list oldest first.
func Name(cluster string, at time.Time, reason string) string {
	return cluster + "/" + at.UTC().Format("20060102T150405Z") + "-" + slug(reason)
}

// slug is reason in lower case with every run of other characters than
// a-z and 0-9 turned into one '-', at most 40 characters.
func slug(reason string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(reason) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		return ReasonManual
	}
	return s
}

// FullName turns a snapshot name given with or without its "<cluster>/"
// prefix into the stored name.
func FullName(cluster, name string) string {
	if strings.HasPrefix(name, cluster+"/") {
		return name
	}
	return cluster + "/" + name
}

// Ops seals snap as the snapshot of cluster taken at now for reason and
// returns the info, and the operations that store it (create-only) and
// delete the cluster's oldest stored snapshots beyond keep (DefaultKeep
// when <= 0), the new one counted.
func Ops(sealer store.Sealer, st *store.State, cluster string, snap *Snapshot, reason string, now time.Time, keep int) (apiv1.EtcdSnapshotInfo, []store.Op, error) {
	if keep <= 0 {
		keep = DefaultKeep
	}
	if reason == "" {
		reason = ReasonManual
	}
	name := Name(cluster, now, reason)
	gz, err := compress(snap.Data)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("store etcd snapshot %s: %w", name, err)
	}
	sealed, err := sealer.Seal(apiv1.KindEtcdSnapshot, name, gz)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("store etcd snapshot %s: %w", name, err)
	}
	info := apiv1.EtcdSnapshotInfo{
		Name: name, Cluster: cluster, TakenAt: now.UTC().Format(time.RFC3339), Reason: reason,
		Member: snap.Member, SizeBytes: int64(len(snap.Data)), StoredBytes: int64(len(gz)),
		SHA256: snap.SHA256, Revision: snap.Revision,
	}
	data, err := json.Marshal(Stored{EtcdSnapshotInfo: info, Content: sealed})
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("encode etcd snapshot %s: %w", name, err)
	}
	ops := []store.Op{{Put: &store.Put{Kind: apiv1.KindEtcdSnapshot, Name: name, Data: data, ExpectModifyIndex: store.Expect(0)}}}
	old := st.ListPrefix(apiv1.KindEtcdSnapshot, cluster+"/")
	slices.SortFunc(old, func(a, b store.Object) int { return strings.Compare(a.Name, b.Name) })
	if drop := len(old) - (keep - 1); drop > 0 {
		for _, o := range old[:drop] {
			ops = append(ops, store.Op{Delete: &store.Delete{Kind: apiv1.KindEtcdSnapshot, Name: o.Name, ExpectModifyIndex: store.Expect(o.ModifyIndex)}})
		}
	}
	return info, ops, nil
}

// List returns the metadata of cluster's stored snapshots, oldest first.
func List(st *store.State, cluster string) ([]apiv1.EtcdSnapshotInfo, error) {
	objs := st.ListPrefix(apiv1.KindEtcdSnapshot, cluster+"/")
	slices.SortFunc(objs, func(a, b store.Object) int { return strings.Compare(a.Name, b.Name) })
	out := make([]apiv1.EtcdSnapshotInfo, 0, len(objs))
	for _, o := range objs {
		var s Stored
		if err := json.Unmarshal(o.Data, &s); err != nil {
			return nil, fmt.Errorf("decode etcd snapshot %s: %w", o.Name, err)
		}
		out = append(out, s.EtcdSnapshotInfo)
	}
	return out, nil
}

// Lookup returns the metadata of the stored snapshot name (full name).
func Lookup(st *store.State, name string) (apiv1.EtcdSnapshotInfo, error) {
	o, ok := st.Get(apiv1.KindEtcdSnapshot, name)
	if !ok {
		return apiv1.EtcdSnapshotInfo{}, fmt.Errorf("look up %s: %w", name, ErrNotFound)
	}
	var s Stored
	if err := json.Unmarshal(o.Data, &s); err != nil {
		return apiv1.EtcdSnapshotInfo{}, fmt.Errorf("decode etcd snapshot %s: %w", name, err)
	}
	return s.EtcdSnapshotInfo, nil
}

// Open returns the metadata and the gzipped content of the stored snapshot
// name, unsealed; the content's SHA-256 (once gunzipped) is checked.
func Open(sealer store.Sealer, st *store.State, name string) (apiv1.EtcdSnapshotInfo, []byte, error) {
	o, ok := st.Get(apiv1.KindEtcdSnapshot, name)
	if !ok {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("open %s: %w", name, ErrNotFound)
	}
	var s Stored
	if err := json.Unmarshal(o.Data, &s); err != nil {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("decode etcd snapshot %s: %w", name, err)
	}
	gz, err := sealer.Open(apiv1.KindEtcdSnapshot, name, s.Content)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("open etcd snapshot %s: %w", name, err)
	}
	raw, err := Decompress(gz)
	if err != nil {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("open etcd snapshot %s: %w", name, err)
	}
	sum := sha256.Sum256(raw)
	if hex.EncodeToString(sum[:]) != s.SHA256 {
		return apiv1.EtcdSnapshotInfo{}, nil, fmt.Errorf("open etcd snapshot %s: %w: sha256 mismatch", name, ErrInvalid)
	}
	return s.EtcdSnapshotInfo, gz, nil
}

func compress(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return buf.Bytes(), nil
}

// Decompress gunzips a stored snapshot's content.
func Decompress(gz []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w: %w", ErrInvalid, err)
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w: %w", ErrInvalid, err)
	}
	return out, nil
}

// ClusterSecretName is the Secret object that holds a cluster's PKI, as
// the orchestrator stores it.
func ClusterSecretName(cluster string) string { return "cluster/" + cluster }

// OpenClusterSecrets opens the cluster's stored PKI; ErrNotFound when none
// is stored yet.
func OpenClusterSecrets(sealer store.Sealer, st *store.State, cluster string) (*pki.ClusterSecrets, error) {
	name := ClusterSecretName(cluster)
	obj, ok := st.Get(store.KindSecret, name)
	if !ok {
		return nil, fmt.Errorf("open secrets of %s: %w", cluster, ErrNotFound)
	}
	var sealed store.Sealed
	if err := json.Unmarshal(obj.Data, &sealed); err != nil {
		return nil, fmt.Errorf("open secrets of %s: %w", cluster, err)
	}
	pt, err := sealer.Open(store.KindSecret, name, sealed)
	if err != nil {
		return nil, fmt.Errorf("open secrets of %s: %w", cluster, err)
	}
	var s pki.ClusterSecrets
	if err := json.Unmarshal(pt, &s); err != nil {
		return nil, fmt.Errorf("open secrets of %s: %w", cluster, err)
	}
	return &s, nil
}
