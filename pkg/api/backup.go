package api

import (
	"path"
	"strings"
	"time"
)

// Bounds and defaults of spec.etcdBackup.
const (
	// MinBackupInterval is the shortest interval between scheduled backups:
	// a snapshot streams the whole etcd database, so more often than this
	// only loads etcd and the controller's disk.
	MinBackupInterval = time.Minute
	// MaxBackupInterval is the longest interval between scheduled backups.
	MaxBackupInterval = 30 * 24 * time.Hour
	// DefaultBackupInterval is the interval when spec.etcdBackup leaves it out.
	DefaultBackupInterval = "6h"
	// MaxBackupKeep is the most scheduled backups kept per cluster.
	MaxBackupKeep = 100
	// DefaultBackupKeep is how many scheduled backups are kept by default.
	DefaultBackupKeep = 7
	// MaxBackupMaxAge is the longest a scheduled backup may be kept.
	MaxBackupMaxAge = 365 * 24 * time.Hour
	// BackupTargetController keeps the backups in the controller's data
	// directory, outside raft.
	BackupTargetController = "controller"
	// BackupTargetNodes keeps the backups on every control plane, each
	// taken there from its own etcd member into nodePath.
	BackupTargetNodes = "nodes"
	// NodeBackupRoot is the directory spec.etcdBackup.nodePath must be in:
	// a node agent writes backups nowhere else (mount a backup disk or a
	// network share at or under it).
	NodeBackupRoot = "/var/backups"
	// DefaultNodeBackupPath is nodePath when spec.etcdBackup leaves it out.
	DefaultNodeBackupPath = NodeBackupRoot + "/kcore/etcd"
	// MaxNodeBackupPath is the longest nodePath, in bytes.
	MaxNodeBackupPath = 255
)

// EtcdBackupSpec schedules etcd backups of a cluster. The controller leader
// takes a snapshot every interval, verifies it, keeps it sealed on its disk
// (outside raft; raft records only its metadata and checksum) and drops the
// backups beyond keep or older than maxAge.
type EtcdBackupSpec struct {
	// Interval is the time between two scheduled backups, a duration such as
	// 30m or 6h (default 6h, between 1m and 720h).
	Interval string `json:"interval,omitempty" yaml:"interval,omitempty"`
	// Keep is how many scheduled backups are kept, newest first (default 7, at most 100).
	Keep int `json:"keep,omitempty" yaml:"keep,omitempty"`
	// MaxAge drops scheduled backups older than this duration, e.g. 168h;
	// empty keeps them regardless of age (only keep applies).
	MaxAge string `json:"maxAge,omitempty" yaml:"maxAge,omitempty"`
	// Target is where the backups are kept: controller (the default), the
	// data directory of the controller replica that took them; or nodes,
	// nodePath on every control plane, each taking its own from its etcd
	// member.
	Target string `json:"target,omitempty" yaml:"target,omitempty"`
	// NodePath is the directory on each control plane that holds the
	// backups of target nodes (default /var/backups/kcore/etcd; it must be
	// in /var/backups). Files are named etcd-<cluster>-<taken, UTC>.db,
	// each beside a .sha256 file sha256sum -c checks.
	NodePath string `json:"nodePath,omitempty" yaml:"nodePath,omitempty"`
}

func (b *EtcdBackupSpec) defaults() {
	if b == nil {
		return
	}
	if b.Interval == "" {
		b.Interval = DefaultBackupInterval
	}
	if b.Keep == 0 {
		b.Keep = DefaultBackupKeep
	}
	if b.Target == "" {
		b.Target = BackupTargetController
	}
	if b.Target == BackupTargetNodes && b.NodePath == "" {
		b.NodePath = DefaultNodeBackupPath
	}
}

// ControllerBackups returns the schedule of the backups the controller
// takes and keeps, nil when there are none (no spec.etcdBackup, or its
// target is nodes: each control plane takes its own).
func (s *ClusterSpec) ControllerBackups() *EtcdBackupSpec {
	if s.EtcdBackup == nil || s.EtcdBackup.Target == BackupTargetNodes {
		return nil
	}
	return s.EtcdBackup
}

// IntervalDuration is the parsed interval, clamped to the bounds
// (DefaultBackupInterval when it does not parse).
func (b EtcdBackupSpec) IntervalDuration() time.Duration {
	d, err := time.ParseDuration(b.Interval)
	if err != nil {
		d, _ = time.ParseDuration(DefaultBackupInterval)
	}
	return min(max(d, MinBackupInterval), MaxBackupInterval)
}

// MaxAgeDuration is the parsed maxAge; 0 when empty or invalid (no age limit).
func (b EtcdBackupSpec) MaxAgeDuration() time.Duration {
	d, err := time.ParseDuration(b.MaxAge)
	if err != nil || d <= 0 {
		return 0
	}
	return d
}

// KeepCount is keep, DefaultBackupKeep when unset, at most MaxBackupKeep.
func (b EtcdBackupSpec) KeepCount() int {
	if b.Keep <= 0 {
		return DefaultBackupKeep
	}
	return min(b.Keep, MaxBackupKeep)
}

// validateEtcdBackup checks a defaulted spec.etcdBackup.
func validateEtcdBackup(v *collector, b *EtcdBackupSpec) {
	if b == nil {
		return
	}
	const base = "spec.etcdBackup"
	interval, err := time.ParseDuration(b.Interval)
	switch {
	case err != nil:
		v.errorf(base+".interval", "%q is not a duration such as 30m or 6h", b.Interval)
	case interval < MinBackupInterval || interval > MaxBackupInterval:
		v.errorf(base+".interval", "must be between %s and %s, got %s", MinBackupInterval, MaxBackupInterval, interval)
	}
	if b.Keep < 1 || b.Keep > MaxBackupKeep {
		v.errorf(base+".keep", "must be between 1 and %d, got %d", MaxBackupKeep, b.Keep)
	}
	if b.MaxAge != "" {
		age, err := time.ParseDuration(b.MaxAge)
		switch {
		case err != nil:
			v.errorf(base+".maxAge", "%q is not a duration such as 168h", b.MaxAge)
		case age <= 0 || age > MaxBackupMaxAge:
			v.errorf(base+".maxAge", "must be more than 0 and at most %s, got %s", MaxBackupMaxAge, age)
		case err == nil && interval > 0 && age < interval:
			v.errorf(base+".maxAge", "%s is shorter than the interval %s: every backup would be dropped before the next one is taken", age, interval)
		}
	}
	oneOf(v, base+".target", b.Target, BackupTargetController, BackupTargetNodes)
	switch {
	case b.NodePath == "":
	case b.Target != BackupTargetNodes:
		v.errorf(base+".nodePath", "is only read with target %q", BackupTargetNodes)
	case len(b.NodePath) > MaxNodeBackupPath:
		v.errorf(base+".nodePath", "is %d bytes long, more than %d", len(b.NodePath), MaxNodeBackupPath)
	case !path.IsAbs(b.NodePath) || path.Clean(b.NodePath) != b.NodePath || strings.ContainsAny(b.NodePath, "\x00\n"):
		v.errorf(base+".nodePath", "%q is not a clean absolute path", b.NodePath)
	case !strings.HasPrefix(b.NodePath, NodeBackupRoot+"/"):
		v.errorf(base+".nodePath", "%q is not in %s, the only directory node agents write backups to", b.NodePath, NodeBackupRoot)
	}
}
