package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testScheduledBackupRestore is the scheduled-backup drill: on a ready lab,
// spec.etcdBackup with a one-minute interval is applied; a ConfigMap is
// written, then the test waits for a scheduled backup taken after it,
// exports it with kctl and checks the file's SHA-256 against the listed
// one; a second ConfigMap is written, etcd loses quorum (two control
// planes wiped), and kctl kubernetes etcd restore --from-file with the
// exported file brings the cluster back to ready with the first ConfigMap
// and without the second.
func testScheduledBackupRestore(t *testing.T, l *lab) {
	eventually(t, "kctl kubernetes health", 2*time.Minute, l.healthy)
	eventually(t, "three started etcd members", time.Minute, func() error { return l.etcdMembers(3) })

	manifest, err := os.ReadFile(l.manifestFile())
	if err != nil {
		t.Fatal(err)
	}
	withBackup := strings.Replace(string(manifest), "\nspec:\n", "\nspec:\n  etcdBackup:\n    interval: 1m\n    keep: 3\n", 1)
	if withBackup == string(manifest) {
		t.Fatal("the lab manifest has no top-level spec: line")
	}
	f := filepath.Join(t.TempDir(), "cluster-backup.yaml")
	if err := os.WriteFile(f, []byte(withBackup), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := l.kctl(5*time.Minute, "kubernetes", "apply", "-f", f, "--yes"); err != nil {
		t.Fatalf("kctl kubernetes apply with etcdBackup: %v\n%s", err, out)
	}

	eventually(t, "ConfigMap first written", time.Minute, func() error {
		_, err := l.kubectl("create", "configmap", "backup-first", "--from-literal=written=before-backup")
		return err
	})
	written := time.Now().UTC()
	var snap, sum string
	eventually(t, "a scheduled backup taken after ConfigMap first", 4*time.Minute, func() error {
		list, err := l.kctl(time.Minute, "kubernetes", "etcd", "snapshot", "list", cluster)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(list, "\n") {
			f := strings.Fields(line)
			if len(f) < 8 || f[2] != "scheduled" {
				continue
			}
			taken, err := time.Parse(time.RFC3339, f[1])
			if err == nil && taken.After(written) {
				snap, sum = f[0], f[6]
				return nil
			}
		}
		return fmt.Errorf("no scheduled backup after %s yet:\n%s", written.Format(time.RFC3339), list)
	})
	t.Logf("scheduled backup %s, sha256 %s", snap, sum)

	exported := filepath.Join(t.TempDir(), "backup.db")
	if out, err := l.kctl(3*time.Minute, "kubernetes", "etcd", "snapshot", "export", cluster, snap, "-o", exported); err != nil {
		t.Fatalf("kctl kubernetes etcd snapshot export: %v\n%s", err, out)
	}
	data, err := os.ReadFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
		t.Fatalf("exported file sha256 %x, listed %s", got, sum)
	}

	eventually(t, "ConfigMap second written", time.Minute, func() error {
		_, err := l.kubectl("create", "configmap", "backup-second", "--from-literal=written=after-backup")
		return err
	})
	for _, n := range []string{"n2", "n3"} {
		l.wipeEtcd(n)
	}
	eventually(t, "etcd quorum lost", 2*time.Minute, func() error {
		if _, err := l.kubectl("create", "configmap", "backup-during-outage", "--from-literal=written=no-quorum"); err == nil {
			return errors.New("the API still writes")
		}
		return nil
	})

	out, err := l.kctl(15*time.Minute, "kubernetes", "etcd", "restore", cluster, "--from-file", exported, "--yes", "--wait", "--timeout", "12m")
	if err != nil {
		t.Logf("health after the failed restore:\n%s", l.healthOutput())
		t.Fatalf("kctl kubernetes etcd restore --from-file: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	eventually(t, "kctl kubernetes health", 2*time.Minute, l.healthy)
	eventually(t, "ConfigMap first restored", time.Minute, func() error {
		_, err := l.kubectl("get", "configmap", "backup-first", "-o", "name")
		return err
	})
	if out, err := l.kubectl("get", "configmap", "backup-second", "-o", "name"); err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Errorf("ConfigMap second, written after the backup, is not gone: %q, %v", out, err)
	}
	eventually(t, "three started etcd members", time.Minute, func() error { return l.etcdMembers(3) })
}
