package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testRestore is the quorum-loss drill: on a ready lab, write a
// ConfigMap, take an etcd snapshot with kctl, write a second ConfigMap,
// then wipe etcd's data on two of the three control planes so etcd loses
// quorum and the API cannot write. kctl kubernetes etcd restore --yes --wait
// must bring the cluster back to ready with the first ConfigMap and without
// the second (written after the snapshot), and three healthy etcd members.
func testRestore(t *testing.T, l *lab) {
	eventually(t, "kctl kubernetes health", 2*time.Minute, l.healthy)
	eventually(t, "three started etcd members", time.Minute, func() error { return l.etcdMembers(3) })

	eventually(t, "ConfigMap first written", time.Minute, func() error {
		_, err := l.kubectl("create", "configmap", "first", "--from-literal=written=before-snapshot")
		return err
	})
	out, err := l.kctl(3*time.Minute, "kubernetes", "etcd", "snapshot", cluster, "--reason", "e2e drill")
	if err != nil {
		t.Fatalf("kctl kubernetes etcd snapshot: %v\n%s", err, out)
	}
	fields := strings.Fields(out)
	if len(fields) < 3 || fields[0] != "etcd" || fields[1] != "snapshot" {
		t.Fatalf("kctl kubernetes etcd snapshot printed %q", out)
	}
	snap := fields[2]
	t.Logf("%s", strings.TrimSpace(out))
	list, err := l.kctl(time.Minute, "kubernetes", "etcd", "snapshots", cluster)
	if err != nil || !strings.Contains(list, snap) {
		t.Fatalf("kctl kubernetes etcd snapshots does not list %s: %v\n%s", snap, err, list)
	}
	eventually(t, "ConfigMap second written", time.Minute, func() error {
		_, err := l.kubectl("create", "configmap", "second", "--from-literal=written=after-snapshot")
		return err
	})

	for _, n := range []string{"n2", "n3"} {
		l.wipeEtcd(n)
	}
	eventually(t, "etcd quorum lost", 2*time.Minute, func() error {
		if err := l.etcdHealth(labNodes()[0]); err == nil {
			return errors.New("etcd on n1 still answers healthy")
		}
		if _, err := l.kubectl("create", "configmap", "during-outage", "--from-literal=written=no-quorum"); err == nil {
			return errors.New("the API still writes")
		}
		return nil
	})
	t.Logf("etcd lost quorum: n2 and n3 wiped, the API refuses writes")

	start := time.Now()
	out, err = l.kctl(15*time.Minute, "kubernetes", "etcd", "restore", cluster, "--from", snap, "--yes", "--wait", "--timeout", "12m")
	took := time.Since(start)
	if err != nil {
		t.Logf("health after the failed restore:\n%s", l.healthOutput())
		t.Fatalf("kctl kubernetes etcd restore: %v\n%s", err, out)
	}
	t.Logf("kctl kubernetes etcd restore --wait returned after %s:\n%s", took.Round(time.Second), out)

	eventually(t, "kctl kubernetes health", 2*time.Minute, l.healthy)
	t.Logf("restore command to ready: %s (RTO by hand in the users' platform notes: 2h)", took.Round(time.Second))
	eventually(t, "/readyz through the VIP", time.Minute, l.readyz)
	eventually(t, "ConfigMap first restored", time.Minute, func() error {
		_, err := l.kubectl("get", "configmap", "first", "-o", "name")
		return err
	})
	if out, err := l.kubectl("get", "configmap", "second", "-o", "name"); err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Errorf("ConfigMap second, written after the snapshot, is not gone: %q, %v", out, err)
	}
	eventually(t, "three started etcd members", time.Minute, func() error { return l.etcdMembers(3) })
	eventually(t, "three healthy etcd members", time.Minute, func() error {
		for _, n := range labNodes() {
			if err := l.etcdHealth(n); err != nil {
				return err
			}
		}
		return nil
	})
	eventually(t, "the API writes again", time.Minute, func() error {
		_, err := l.kubectl("create", "configmap", "after-restore", "--from-literal=written=after-restore")
		return err
	})
	if audit, err := l.kctl(time.Minute, "audit", "--object", "KubernetesCluster/"+cluster, "-o", "json"); err == nil {
		if !strings.Contains(audit, `"route": "POST /v1/clusters/{name}/etcd/restore"`) || !strings.Contains(audit, `"action": "restore etcd"`) {
			t.Errorf("the audit log has no restore request:\n%s", audit)
		}
	}
}

// wipeEtcd destroys etcd's data on lab node n for good: the data directory
// is moved aside and replaced by a regular file, so the etcd the supervisor
// restarts cannot start again, then the running etcd is killed and the old
// data removed.
func (l *lab) wipeEtcd(n string) {
	l.t.Helper()
	dir := filepath.Join(l.dir, n, "var", "lib", "etcd")
	aside := dir + ".wiped"
	if err := os.Rename(dir, aside); err != nil {
		l.t.Fatalf("move etcd data of %s aside: %v", n, err)
	}
	if err := os.WriteFile(dir, []byte("wiped by the quorum-loss drill\n"), 0o600); err != nil {
		l.t.Fatalf("block etcd data dir of %s: %v", n, err)
	}
	eventually(l.t, "etcd on "+n+" stopped", time.Minute, func() error {
		pid, err := l.unitPID(n, "kcore-etcd")
		if err != nil {
			return nil
		}
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		if l.etcdHealth(l.node(n)) == nil {
			return fmt.Errorf("etcd on %s still answers", n)
		}
		return nil
	})
	if err := os.RemoveAll(aside); err != nil {
		l.t.Fatalf("remove etcd data of %s: %v", n, err)
	}
	l.t.Logf("etcd data on %s wiped", n)
}

func (l *lab) node(name string) labNode {
	for _, n := range labNodes() {
		if n.name == name {
			return n
		}
	}
	l.t.Fatalf("no lab node %s", name)
	return labNode{}
}

// etcdHealth is nil when etcd on node n answers healthy.
func (l *lab) etcdHealth(n labNode) error {
	out, err := run(15*time.Second, nil, filepath.Join(l.k8sBin, "etcdctl"),
		"--endpoints", "https://"+n.addr+":2379", "--command-timeout", "3s",
		"--cacert", filepath.Join(l.dir, "n1/etc/kubernetes/pki/etcd/ca.crt"),
		"--cert", filepath.Join(l.dir, "n1/etc/kubernetes/pki/apiserver-etcd-client.crt"),
		"--key", filepath.Join(l.dir, "n1/etc/kubernetes/pki/apiserver-etcd-client.key"),
		"endpoint", "health")
	if err != nil {
		return fmt.Errorf("etcd on %s: %w", n.name, err)
	}
	if !strings.Contains(out, "is healthy") {
		return fmt.Errorf("etcd on %s: %s", n.name, strings.TrimSpace(out))
	}
	return nil
}
