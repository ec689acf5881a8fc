package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/etcdsnap"
)

// The second cluster the lab runs next to its first on the same machines.
const (
	cluster2 = "lab2"
	vip2     = "10.77.0.101"
	apiPort2 = "6445"
	// secondTimeout bounds the second cluster's create and delete.
	secondTimeout = 8 * time.Minute
	// canaryConfigMap is the object written into the first cluster before
	// the second exists and read back after it is gone.
	canaryConfigMap = "e2e-second-cluster-canary"
)

// secondManifest is the lab manifest turned into a second cluster: its own
// name, pod and service ranges, DNS address, VIP and API port; its control
// planes on the lab's three machines (control plane only there, since the
// lab's kubelets run on them) and the spare namespace as the worker its
// pods run on; no volumes; etcd backups every minute kept on its control
// planes.
func secondManifest(t *testing.T, l *lab) string {
	t.Helper()
	src := l.labManifest(t)
	for _, r := range [][2]string{
		{"  name: lab\n", "  name: " + cluster2 + "\n"},
		{"clusterCidr: 10.244.0.0/16", "clusterCidr: 10.245.0.0/16"},
		{"serviceCidr: 10.96.0.0/12", "serviceCidr: 10.128.0.0/16"},
		{"clusterDns: 10.96.0.10", "clusterDns: 10.128.0.10"},
		{"apiServerEndpoint: " + vip + ":" + apiPort, "apiServerEndpoint: " + vip2 + ":" + apiPort2},
		{"vipAddress: " + vip, "vipAddress: " + vip2},
		{"scheduleOnControlPlane: true", "scheduleOnControlPlane: false"},
		{"  highAvailability:", "  workerNodes:\n    - nodeId: " + spareNode + "\n      advertiseAddress: " + spareAddr + "\n      iface: eth0\n" +
			"  etcdBackup:\n    target: nodes\n    interval: 1m\n    keep: 2\n  highAvailability:"},
	} {
		src = edit(t, src, r[0], r[1])
	}
	start, end := strings.Index(src, "  localProvisioner:"), strings.Index(src, "  registryMirrors:")
	if start < 0 || end < start {
		t.Fatalf("the lab manifest has no localProvisioner block before registryMirrors:\n%s", src)
	}
	return src[:start] + "  localProvisioner:\n    enabled: false\n" + src[end:]
}

// firstClusterMarks is what must not change in the first cluster while a
// second one is created on its machines and deleted: every file of its
// PKI and kubeconfigs (sha256), its etcd members, the pid of each of its
// units, and an object written into its etcd.
type firstClusterMarks struct {
	files   map[string]string
	members string
	pids    map[string]int
	canary  string
}

// marks reads the first cluster's marks.
func (l *lab) marks(t *testing.T) firstClusterMarks {
	t.Helper()
	m := firstClusterMarks{files: map[string]string{}, pids: map[string]int{}}
	for _, n := range labNodes() {
		root := filepath.Join(l.dir, n.name, "etc", "kubernetes")
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p == filepath.Join(root, "clusters") {
				return filepath.SkipDir
			}
			if d.IsDir() || (!strings.HasSuffix(p, ".conf") && !strings.Contains(p, "/pki/")) {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			m.files[p] = hex.EncodeToString(sum[:])
			return nil
		})
		if err != nil {
			t.Fatalf("checksum %s: %v", root, err)
		}
		s, err := l.units(n.name)
		if err != nil {
			t.Fatal(err)
		}
		for name, u := range s.Units {
			if !strings.HasPrefix(name, "kcore-s") {
				m.pids[n.id+" "+name] = u.PID
			}
		}
	}
	out, err := l.etcdctl("member", "list")
	if err != nil {
		t.Fatalf("etcdctl member list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(lines)
	m.members = strings.Join(lines, "\n")
	canary, err := l.kubectl("get", "configmap", canaryConfigMap, "-n", "default", "-o", "jsonpath={.metadata.uid} {.metadata.resourceVersion} {.data.v}")
	if err != nil {
		t.Fatalf("read the canary ConfigMap: %v", err)
	}
	m.canary = canary
	return m
}

// same fails the test for every mark of want that got differs in.
func (want firstClusterMarks) same(t *testing.T, got firstClusterMarks) {
	t.Helper()
	for _, f := range slices.Sorted(maps.Keys(want.files)) {
		if got.files[f] != want.files[f] {
			t.Errorf("the first cluster's %s changed (sha256 %s → %q)", f, want.files[f], got.files[f])
		}
	}
	if len(got.files) != len(want.files) {
		t.Errorf("the first cluster has %d PKI and kubeconfig files, had %d", len(got.files), len(want.files))
	}
	if got.members != want.members {
		t.Errorf("the first cluster's etcd members changed:\n%s\n→\n%s", want.members, got.members)
	}
	if !maps.Equal(got.pids, want.pids) {
		t.Errorf("the first cluster's units restarted or changed: %v → %v", want.pids, got.pids)
	}
	if got.canary != want.canary {
		t.Errorf("the canary object in the first cluster's etcd changed: %q → %q", want.canary, got.canary)
	}
}

// kubectl2 runs kubectl with n1's admin.conf of the second cluster, whose
// server is the second VIP.
func (l *lab) kubectl2(args ...string) (string, error) {
	argv := append([]string{filepath.Join(l.k8sBin, "kubectl"), "--kubeconfig", filepath.Join(l.dir, "n1", "etc", "kubernetes", "clusters", cluster2, "admin.conf"), "--request-timeout=5s"}, args...)
	return run(15*time.Second, nil, argv...)
}

// testSecondCluster: a second cluster on the lab's three machines (plus the
// spare namespace as its worker) is planned into its own slot, becomes
// ready and answers through its own VIP while the first stays ready; its
// delete removes only what it put there: the first cluster's certificates,
// kubeconfigs, etcd members, unit processes and data are the same before
// and after.
func testSecondCluster(t *testing.T, l *lab) {
	eventually(t, "the first cluster ready", fieldReadyTimeout, l.healthy)
	if out, err := l.kubectl("create", "configmap", canaryConfigMap, "-n", "default", "--from-literal=v="+time.Now().Format(time.RFC3339Nano)); err != nil {
		t.Fatalf("write the canary ConfigMap: %v\n%s", err, out)
	}
	before := l.marks(t)
	// The first cluster's promises hold while the second comes and goes
	// on the same machines (lab-n4 is the second cluster's worker).
	inv := l.startInvariants(t, append(labNodes(), labNodeN(4))...)
	defer inv.check(t)
	f := filepath.Join(t.TempDir(), "lab2.yaml")
	if err := os.WriteFile(f, []byte(secondManifest(t, l)), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := l.kctl(secondTimeout+time.Minute, "kubernetes", "apply", "-f", f, "--yes", "--wait", "--timeout", secondTimeout.String())
	if err != nil {
		t.Fatalf("kctl kubernetes apply %s: %v\n%s", cluster2, err, out)
	}
	t.Logf("second cluster ready in %s", time.Since(start).Round(time.Second))
	for _, want := range []string{"control-plane-only", "kcore-s1-etcd: etcd member lab-n1 (slot 1, ports 2479, 2480)", "keepalived instance kcore_api_1: VIP " + vip2} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan of the second cluster does not say %q:\n%s", want, out)
		}
	}
	eventually(t, "/readyz of the second cluster through its VIP", 30*time.Second, func() error {
		out, err := l.kubectl2("get", "--raw", "/readyz")
		if err == nil && strings.TrimSpace(out) != "ok" {
			err = fmt.Errorf("/readyz through %s answered %q", vip2, out)
		}
		return err
	})
	eventually(t, "one holder of each VIP", 30*time.Second, func() error {
		for _, a := range []string{vip, vip2} {
			if h, err := addrHolders(a); err != nil || len(h) != 1 {
				return fmt.Errorf("VIP %s held by %v (%v)", a, h, err)
			}
		}
		return nil
	})
	eventually(t, "the second cluster's worker Ready", 2*time.Minute, func() error {
		out, err := l.kubectl2("get", "nodes", "-o", "json")
		if err != nil {
			return err
		}
		return allNodesReady(out, 1)
	})
	eventually(t, "the second cluster's add-ons and health", fieldReadyTimeout, func() error {
		_, err := l.kctl(30*time.Second, "kubernetes", "health", cluster2)
		return err
	})
	l.checkNodeBackups(t)
	if err := l.healthy(); err != nil {
		t.Errorf("the first cluster with the second running: %v\n%s", err, l.healthOutput())
	}
	if err := l.readyz(); err != nil {
		t.Errorf("the first cluster's /readyz with the second running: %v", err)
	}
	l.marks(t).same(t, before)

	if out, err := l.kctl(secondTimeout+time.Minute, "kubernetes", "delete", cluster2, "--yes", "--wait", "--timeout", secondTimeout.String()); err != nil {
		t.Fatalf("kctl kubernetes delete %s: %v\n%s", cluster2, err, out)
	}
	eventually(t, "the first cluster ready after the second's delete", fieldReadyTimeout, l.healthy)
	eventually(t, "/readyz through the first VIP", 30*time.Second, l.readyz)
	l.marks(t).same(t, before)
	for _, n := range append(labNodes(), labNodeN(4)) {
		s, err := l.units(n.name)
		if err != nil {
			t.Fatal(err)
		}
		for name := range s.Units {
			if strings.HasPrefix(name, "kcore-s1-") || n.name == "n4" {
				t.Errorf("%s: unit %s left after the second cluster's delete", n.id, name)
			}
		}
		// The agent removes what it wrote; empty directories may stay, as
		// for the first cluster's delete.
		var left []string
		_ = filepath.WalkDir(filepath.Join(l.dir, n.name, "etc", "kubernetes", "clusters", cluster2), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				left = append(left, p)
			}
			return nil
		})
		if len(left) > 0 {
			t.Errorf("%s: files of the second cluster left after its delete: %v", n.id, left)
		}
	}
	if out, err := l.kubectl("delete", "configmap", canaryConfigMap, "-n", "default"); err != nil {
		t.Errorf("remove the canary ConfigMap: %v\n%s", err, out)
	}
	// The backups are the operator's data: the delete leaves them.
	for _, n := range labNodes() {
		if files, _ := filepath.Glob(filepath.Join(l.dir, n.name, api.DefaultNodeBackupPath, "etcd-"+cluster2+"-*.db")); len(files) == 0 {
			t.Errorf("%s: the second cluster's etcd backups went with its delete", n.id)
		}
	}
}

// checkNodeBackups waits for a backup of the second cluster's etcd on each
// of its control planes (spec.etcdBackup.target nodes, every minute), then
// checks every one the way a restore would read it: the .sha256 beside it
// matches and bbolt opens it at a revision of etcd's.
func (l *lab) checkNodeBackups(t *testing.T) {
	t.Helper()
	eventually(t, "an etcd backup of the second cluster on each control plane", 3*time.Minute, func() error {
		for _, n := range labNodes() {
			files, err := filepath.Glob(filepath.Join(l.dir, n.name, api.DefaultNodeBackupPath, "etcd-"+cluster2+"-*.db"))
			if err != nil || len(files) == 0 {
				return fmt.Errorf("%s: no backup in %s yet (%v)", n.id, api.DefaultNodeBackupPath, err)
			}
		}
		return nil
	})
	for _, n := range labNodes() {
		files, _ := filepath.Glob(filepath.Join(l.dir, n.name, api.DefaultNodeBackupPath, "etcd-"+cluster2+"-*.db"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			line, err := os.ReadFile(f + ".sha256")
			sum := sha256.Sum256(data)
			if err != nil || !strings.HasPrefix(string(line), hex.EncodeToString(sum[:])+"  "+filepath.Base(f)) {
				t.Errorf("%s: %s.sha256 = %q (%v), want the file's checksum", n.id, f, line, err)
			}
			rev, err := etcdsnap.Verify(data, t.TempDir())
			if err != nil || rev <= 0 {
				t.Errorf("%s: %s: revision %d, %v", n.id, f, rev, err)
			}
		}
		t.Logf("%s: %d etcd backups of %s on the node", n.id, len(files), cluster2)
	}
}
