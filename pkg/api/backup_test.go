package api

import (
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
	short := EtcdBackupSpec{Interval: "1s", Keep: MaxBackupKeep + 5}
	if short.IntervalDuration() != MinBackupInterval || short.KeepCount() != MaxBackupKeep {
		t.Fatalf("clamped %s %d", short.IntervalDuration(), short.KeepCount())
	}
}
