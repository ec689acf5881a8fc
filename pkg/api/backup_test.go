package api

import (
	"strings"
	"testing"
	"time"
)

func TestEtcdBackupValidate(t *testing.T) {
	tests := []struct {
		name      string
		backup    *EtcdBackupSpec
		want      []string
		fragments []string
	}{
		{"absent", nil, nil, nil},
		{"defaults", &EtcdBackupSpec{}, nil, nil},
		{"interval at the lower bound", &EtcdBackupSpec{Interval: MinBackupInterval.String()}, nil, nil},
		{"interval under the lower bound", &EtcdBackupSpec{Interval: (MinBackupInterval - time.Second).String()},
			[]string{"error spec.etcdBackup.interval"}, []string{"must be between 1m0s and 720h0m0s, got 59s"}},
		{"interval at the upper bound", &EtcdBackupSpec{Interval: MaxBackupInterval.String()}, nil, nil},
		{"interval over the upper bound", &EtcdBackupSpec{Interval: (MaxBackupInterval + time.Second).String()},
			[]string{"error spec.etcdBackup.interval"}, []string{"must be between"}},
		{"interval not a duration", &EtcdBackupSpec{Interval: "daily"},
			[]string{"error spec.etcdBackup.interval"}, []string{`"daily" is not a duration`}},
		{"keep at the bound", &EtcdBackupSpec{Keep: MaxBackupKeep}, nil, nil},
		{"keep over the bound", &EtcdBackupSpec{Keep: MaxBackupKeep + 1},
			[]string{"error spec.etcdBackup.keep"}, []string{"must be between 1 and 100, got 101"}},
		{"keep negative", &EtcdBackupSpec{Keep: -1}, []string{"error spec.etcdBackup.keep"}, nil},
		{"maxAge at the bound", &EtcdBackupSpec{MaxAge: MaxBackupMaxAge.String()}, nil, nil},
		{"maxAge over the bound", &EtcdBackupSpec{MaxAge: (MaxBackupMaxAge + time.Second).String()},
			[]string{"error spec.etcdBackup.maxAge"}, []string{"at most 8760h0m0s"}},
		{"maxAge shorter than the interval", &EtcdBackupSpec{Interval: "1h", MaxAge: "30m"},
			[]string{"error spec.etcdBackup.maxAge"}, []string{"shorter than the interval"}},
		{"maxAge not a duration", &EtcdBackupSpec{MaxAge: "a week"}, []string{"error spec.etcdBackup.maxAge"}, nil},
		{"unknown target", &EtcdBackupSpec{Target: "s3"},
			[]string{"error spec.etcdBackup.target"}, []string{`"s3" is not one of`}},
		{"target nodes, default path", &EtcdBackupSpec{Target: BackupTargetNodes}, nil, nil},
		{"target nodes in a share", &EtcdBackupSpec{Target: BackupTargetNodes, NodePath: "/var/backups/nfs/etcd"}, nil, nil},
		{"node path with target controller", &EtcdBackupSpec{NodePath: "/var/backups/etcd"},
			[]string{"error spec.etcdBackup.nodePath"}, []string{`only read with target "nodes"`}},
		{"node path outside /var/backups", &EtcdBackupSpec{Target: BackupTargetNodes, NodePath: "/etc/kubernetes"},
			[]string{"error spec.etcdBackup.nodePath"}, []string{"not in /var/backups"}},
		{"node path /var/backups itself", &EtcdBackupSpec{Target: BackupTargetNodes, NodePath: "/var/backups"},
			[]string{"error spec.etcdBackup.nodePath"}, []string{"not in /var/backups"}},
		{"node path escaping", &EtcdBackupSpec{Target: BackupTargetNodes, NodePath: "/var/backups/../../etc"},
			[]string{"error spec.etcdBackup.nodePath"}, []string{"not a clean absolute path"}},
		{"node path relative", &EtcdBackupSpec{Target: BackupTargetNodes, NodePath: "var/backups/etcd"},
			[]string{"error spec.etcdBackup.nodePath"}, []string{"not a clean absolute path"}},
		{"node path at the length bound", &EtcdBackupSpec{Target: BackupTargetNodes, NodePath: "/var/backups/" + strings.Repeat("a", MaxNodeBackupPath-len("/var/backups/"))}, nil, nil},
		{"node path over the length bound", &EtcdBackupSpec{Target: BackupTargetNodes, NodePath: "/var/backups/" + strings.Repeat("a", MaxNodeBackupPath+1-len("/var/backups/"))},
			[]string{"error spec.etcdBackup.nodePath"}, []string{"more than 255"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseCluster()
			c.Spec.EtcdBackup = tt.backup
			c.Default()
			checkIssues(t, c.Validate(), tt.want, tt.fragments)
		})
	}
}

func TestEtcdBackupDefaults(t *testing.T) {
	c := baseCluster()
	c.Spec.EtcdBackup = &EtcdBackupSpec{}
	c.Default()
	b := c.Spec.EtcdBackup
	if b.Interval != DefaultBackupInterval || b.Keep != DefaultBackupKeep || b.Target != BackupTargetController || b.MaxAge != "" {
		t.Fatalf("defaults %+v", b)
	}
	if b.IntervalDuration() != 6*time.Hour || b.KeepCount() != DefaultBackupKeep || b.MaxAgeDuration() != 0 {
		t.Fatalf("durations %s %d %s", b.IntervalDuration(), b.KeepCount(), b.MaxAgeDuration())
	}
	nodes := baseCluster()
	nodes.Spec.EtcdBackup = &EtcdBackupSpec{Target: BackupTargetNodes}
	nodes.Default()
	if nodes.Spec.EtcdBackup.NodePath != DefaultNodeBackupPath {
		t.Fatalf("nodePath default %q", nodes.Spec.EtcdBackup.NodePath)
	}
	short := EtcdBackupSpec{Interval: "1s", Keep: MaxBackupKeep + 5}
	if short.IntervalDuration() != MinBackupInterval || short.KeepCount() != MaxBackupKeep {
		t.Fatalf("clamped %s %d", short.IntervalDuration(), short.KeepCount())
	}
}
