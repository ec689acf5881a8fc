package etcdsnap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/confined"
)

// Names of the files of a node's backups: etcd-<cluster>-<taken>.db, the
// etcd database file, beside <that>.sha256 in sha256sum's format.
const (
	nodeBackupPrefix = "etcd-"
	nodeBackupExt    = ".db"
	nodeBackupSumExt = ".sha256"
	nodeBackupStamp  = "20060102T150405Z"
	// maxNodeBackupSum bounds the .sha256 file List reads.
	maxNodeBackupSum = 4096
)

// ErrEmpty refuses to keep a node backup of a member that holds no keys.
var ErrEmpty = errors.New("empty etcd snapshot")

// NodeBackups keeps the scheduled backups of one cluster in a directory of
// one of its control planes (spec.etcdBackup target nodes): a snapshot of
// the local etcd member every Interval, verified before it is kept, and the
// retention the controller applies to its own backups (Expired). Every
// file operation is confined to Root: no name beneath it, the directory
// Dir included, is followed through a symlink.
type NodeBackups struct {
	// Root is the trusted directory the backups live in (the node's
	// api.NodeBackupRoot).
	Root *confined.Dir
	// Dir holds the backups, relative to Root; it and its missing parents
	// are created (0700) on the first backup.
	Dir string
	// Cluster names the files, so clusters sharing a directory keep apart.
	Cluster string
	// Interval is the time between two backups.
	Interval time.Duration
	// Keep and MaxAge are the retention (MaxAge 0: no age limit).
	Keep   int
	MaxAge time.Duration
	// Take streams one snapshot and verifies it in a temporary file of
	// verifyDir, a path naming the backup directory (so the database
	// never lands outside it).
	Take func(ctx context.Context, verifyDir string) (*Snapshot, error)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// NodeBackup is one backup file of a node.
type NodeBackup struct {
	// Name is the file name in the directory.
	Name string
	// TakenAt is when it was taken, from its name.
	TakenAt time.Time
	// SHA256 is the recorded checksum ("" when the .sha256 file is missing).
	SHA256 string
	// Size is the file's size in bytes.
	Size int64
}

func (n *NodeBackups) now() time.Time {
	if n.Now != nil {
		return n.Now().UTC()
	}
	return time.Now().UTC()
}

// List returns the cluster's backups in Dir, oldest first; files of other
// clusters, temporary files and names that do not parse are left out. A
// missing directory holds none.
func (n *NodeBackups) List() ([]NodeBackup, error) {
	entries, err := n.Root.ReadDir(n.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list etcd backups: %w", err)
	}
	prefix := nodeBackupPrefix + n.Cluster + "-"
	var out []NodeBackup
	for _, e := range entries {
		name := e.Name()
		stamp, ok := strings.CutPrefix(name, prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		stamp, ok = strings.CutSuffix(stamp, nodeBackupExt)
		if !ok {
			continue
		}
		at, err := time.Parse(nodeBackupStamp, stamp)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		b := NodeBackup{Name: name, TakenAt: at, Size: info.Size()}
		if sum, err := n.Root.ReadFile(path.Join(n.Dir, name+nodeBackupSumExt), maxNodeBackupSum); err == nil {
			b.SHA256, _, _ = strings.Cut(string(sum), " ")
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TakenAt.Before(out[j].TakenAt) })
	return out, nil
}

// infos is list as the retention functions read it.
func infos(list []NodeBackup) []apiv1.EtcdSnapshotInfo {
	out := make([]apiv1.EtcdSnapshotInfo, len(list))
	for i, b := range list {
		out[i] = apiv1.EtcdSnapshotInfo{Name: b.Name, TakenAt: b.TakenAt.Format(time.RFC3339), Reason: ReasonScheduled}
	}
	return out
}

// Pass takes a backup when one is due (Due) and then drops what the
// retention expires; took is the new backup, nil when none was due. A
// snapshot of a member without keys is not kept (ErrEmpty). A failed
// snapshot leaves the directory as it was, its retention included, so a
// member that stopped answering keeps its last backups.
func (n *NodeBackups) Pass(ctx context.Context) (took *NodeBackup, dropped []string, err error) {
	if dir, err := n.Root.Sub(n.Dir, false, 0); err == nil {
		n.sweepTemp(dir)
		dir.Close()
	}
	list, err := n.List()
	if err != nil {
		return nil, nil, err
	}
	now := n.now()
	if Due(infos(list), n.Interval, now) {
		dir, err := n.Root.Sub(n.Dir, true, 0o700)
		if err != nil {
			return nil, nil, fmt.Errorf("etcd backup directory: %w", err)
		}
		defer dir.Close()
		snap, err := n.Take(ctx, dir.ProcPath())
		if err != nil {
			return nil, nil, fmt.Errorf("take etcd backup of %s: %w", n.Cluster, err)
		}
		if snap.Revision <= 0 {
			// A member that holds no key yet (etcd just formed, nothing
			// written): keeping it would let retention drop real backups.
			return nil, nil, fmt.Errorf("take etcd backup of %s: %w: the member holds no keys yet (revision 0)", n.Cluster, ErrEmpty)
		}
		b, err := n.write(dir, snap, now)
		if err != nil {
			return nil, nil, err
		}
		took = &b
		list = append(list, b)
	}
	for _, d := range Expired(infos(list), n.Keep, n.MaxAge, now) {
		for _, f := range []string{d.Name + nodeBackupSumExt, d.Name} {
			if err := n.Root.Remove(path.Join(n.Dir, f)); err != nil {
				return took, dropped, fmt.Errorf("drop etcd backup: %w", err)
			}
		}
		dropped = append(dropped, d.Name)
	}
	return took, dropped, nil
}

// sweepTemp removes from dir the temporary files a write of this cluster
// that crashed left behind (one process writes them; another cluster's,
// whose name only starts like this one's, are not this one's).
func (n *NodeBackups) sweepTemp(dir *confined.Dir) {
	entries, _ := dir.ReadDir(".")
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "."+nodeBackupPrefix+n.Cluster+"-")
		if !ok || !strings.Contains(rest, confined.TempInfix) || len(rest) < len(nodeBackupStamp) {
			continue
		}
		if _, err := time.Parse(nodeBackupStamp, rest[:len(nodeBackupStamp)]); err == nil {
			dir.Remove(e.Name())
		}
	}
}

// NextDue is how long after now the next backup is due (0 when it is).
func (n *NodeBackups) NextDue() (time.Duration, error) {
	list, err := n.List()
	if err != nil || len(list) == 0 {
		return 0, err
	}
	return max(list[len(list)-1].TakenAt.Add(n.Interval).Sub(n.now()), 0), nil
}

// write keeps snap as the backup taken at now: the database file first,
// then its checksum, each written to a temporary name, synced and renamed,
// so a crash leaves either a whole backup or none (a .db without its
// .sha256 is listed with an empty checksum).
func (n *NodeBackups) write(dir *confined.Dir, snap *Snapshot, now time.Time) (NodeBackup, error) {
	name := nodeBackupPrefix + n.Cluster + "-" + now.Format(nodeBackupStamp) + nodeBackupExt
	sum := sha256.Sum256(snap.Data)
	hexSum := hex.EncodeToString(sum[:])
	if hexSum != snap.SHA256 {
		return NodeBackup{}, fmt.Errorf("etcd backup %s: %w: checksum %s, snapshot says %s", name, ErrInvalid, hexSum, snap.SHA256)
	}
	if _, err := dir.WriteFile(name, bytes.NewReader(snap.Data), 0o600); err != nil {
		return NodeBackup{}, fmt.Errorf("write etcd backup: %w", err)
	}
	if _, err := dir.WriteFile(name+nodeBackupSumExt, strings.NewReader(hexSum+"  "+name+"\n"), 0o600); err != nil {
		return NodeBackup{}, fmt.Errorf("write etcd backup: %w", err)
	}
	return NodeBackup{Name: name, TakenAt: now, SHA256: hexSum, Size: int64(len(snap.Data))}, nil
}
