package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/render"
)

func TestCollectFacts(t *testing.T) {
	root := t.TempDir()
	proc := t.TempDir()
	// Disks by id, and their sizes in sysfs.
	mustMkdir(t, filepath.Join(root, "dev/disk/by-id"))
	mustSymlink(t, "../../sda", filepath.Join(root, "dev/disk/by-id/ata-SAMSUNG_1"))
	mustSymlink(t, "../../sda1", filepath.Join(root, "dev/disk/by-id/ata-SAMSUNG_1-part1"))
	mustMkdir(t, filepath.Join(root, "sys/class/block/sda"))
	writeTestFile(t, filepath.Join(root, "sys/class/block/sda/size"), "1000\n")
	mustMkdir(t, filepath.Join(root, "sys/class/block/sda/sda1"))
	writeTestFile(t, filepath.Join(root, "sys/class/block/sda/sda1/partition"), "1\n")
	mustMkdir(t, filepath.Join(root, "sys/class/block/sda/holders/dm-0"))
	// sda's first partition is mounted at a path under the agent's root.
	mustMkdir(t, filepath.Join(proc, "self"))
	writeTestFile(t, filepath.Join(proc, "self/mounts"), "proc /proc proc rw 0 0\n/dev/sda "+root+"/mnt/kcore/lab/my\\040data xfs rw 0 0\n")
	// Cilium's chart where the Cilium oneshot installs it from.
	mustMkdir(t, filepath.Join(root, render.CiliumChartDir))
	writeTestFile(t, filepath.Join(root, render.CiliumChartDir, "Chart.yaml"), "apiVersion: v2\nname: cilium\nversion: 1.20.2\nappVersion: 1.20.2\n")
	// A cilium-agent process.
	mustMkdir(t, filepath.Join(proc, "77"))
	writeTestFile(t, filepath.Join(proc, "77/comm"), "cilium-agent\n")

	rec := execrun.NewRecorder().
		OnStdout("vgs --reportformat json --units b --nosuffix -o vg_name,vg_size,vg_free", `{"report":[{"vg":[{"vg_name":"vg_kcore","vg_size":"2000","vg_free":"1000"}]}]}`).
		Missing("zpool").
		OnStdout("etcd --version", "etcd Version: 3.5.17\nGit SHA: abc\nGo Version: go1.22\n").
		OnStdout("kubelet --version", "Kubernetes v1.31.2\n").
		On("keepalived --version", execrun.Result{Stderr: []byte("Keepalived v2.2.8 (04/04,2023)\n")}, nil).
		Missing("kube-apiserver").
		OnStdout("helm version --template {{.Version}}", "v4.3.2").
		OnStdout("containerd --version", "containerd github.com/containerd/containerd/v2 v2.4.2 \n").
		OnExit("arping -c 1 -w 1 -I enp6s0 192.168.40.221", 1, "").
		OnStdout("blkid -p -o export /dev/sda", "DEVNAME=/dev/sda\nPTUUID=9\nPTTYPE=gpt\n")
	c := &Collector{
		Root: root, Runner: rec, ProcDir: proc, Labels: map[string]string{api.FailureDomainLabel: "rack-1"},
		Interfaces: func() ([]api.Interface, error) {
			return []api.Interface{{Name: "enp6s0", Up: true, MAC: "aa:bb:cc:dd:ee:ff", Addresses: []string{"192.168.40.105/24", "fe80::1/64"}}}, nil
		},
	}
	f, err := c.Collect(context.Background(), Probe{ARP: []ARPTarget{
		{Address: "192.168.40.200"}, {Address: "192.168.40.221"}, {Address: "192.168.40.105"}, {Address: "10.9.9.9"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.Hostname = ""
	got, _ := json.Marshal(f)
	want := `{"root":"` + root + `","addresses":["192.168.40.105","fe80::1"],` +
		`"interfaces":[{"name":"enp6s0","mac":"aa:bb:cc:dd:ee:ff","up":true,"addresses":["192.168.40.105/24","fe80::1/64"]}],` +
		`"storage":[{"class":"lvm","name":"vg_kcore","sizeBytes":2000,"freeBytes":1000}],` +
		`"disks":[{"id":"ata-SAMSUNG_1","path":"/dev/sda","sizeBytes":512000,"partitionTable":"gpt","partitions":["sda1"],"holders":["dm-0"],"mountPoints":["/mnt/kcore/lab/my data"],"probed":true}],` +
		`"versions":{"cilium-chart":"1.20.2","containerd":"v2.4.2","etcd":"3.5.17","helm":"v4.3.2","keepalived":"v2.2.8","kubelet":"v1.31.2"},` +
		`"labels":{"kcore.dev/failure-domain":"rack-1"},"arpAnswered":["192.168.40.200"],"ciliumRunning":true}`
	if string(got) != want {
		t.Fatalf("facts\n%s\nwant\n%s", got, want)
	}
	var arps []string
	for _, c := range rec.Commands() {
		if strings.HasPrefix(c, "arping") {
			arps = append(arps, c)
		}
	}
	// Only the addresses asked about, never our own, never one off every subnet.
	if strings.Join(arps, "|") != "arping -c 1 -w 1 -I enp6s0 192.168.40.200|arping -c 1 -w 1 -I enp6s0 192.168.40.221" {
		t.Fatalf("arping calls %q", arps)
	}
}

// TestProbeDisksUpToItsBound probes exactly MaxProbedDisks disks with
// blkid and reports the one past the bound unprobed.
func TestProbeDisksUpToItsBound(t *testing.T) {
	disks := make([]api.Disk, MaxProbedDisks+1)
	for i := range disks {
		disks[i] = api.Disk{ID: fmt.Sprintf("ata-%03d", i), Path: fmt.Sprintf("/dev/sd%03d", i)}
	}
	rec := execrun.NewRecorder().OnStdout("blkid -p -o export /dev/sd000", "TYPE=xfs\nLABEL=kcore-abcdef\nUUID=u1\n")
	c := &Collector{Root: t.TempDir(), Runner: rec, ProcDir: t.TempDir()}
	if err := c.probeDisks(context.Background(), disks); err != nil {
		t.Fatal(err)
	}
	if len(rec.Commands()) != MaxProbedDisks || !disks[MaxProbedDisks-1].Probed || disks[MaxProbedDisks].Probed {
		t.Fatalf("probed %d disks, last in bound %v, past it %v", len(rec.Commands()), disks[MaxProbedDisks-1].Probed, disks[MaxProbedDisks].Probed)
	}
	if d := disks[0]; d.FSType != "xfs" || d.Label != "kcore-abcdef" || d.UUID != "u1" || d.Empty() {
		t.Fatalf("disk 0 = %+v", d)
	}
	if !disks[1].Empty() {
		t.Fatalf("disk 1 = %+v, want empty", disks[1])
	}
}

func TestFsyncProbe(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "var/lib/etcd")
	lat, err := FsyncProbe(root, "/var/lib/etcd", 20)
	if err != nil {
		t.Fatal(err)
	}
	if lat.P50Millis < 0 || lat.P99Millis < lat.P50Millis {
		t.Fatalf("latency %+v", lat)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("probe left %d files", len(entries))
	}
}

func TestInterfacesFromNetlink(t *testing.T) {
	ifaces, err := Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifaces {
		if i.Name == "lo" {
			t.Fatal("loopback listed")
		}
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestContainerdVersionFact reads the version out of what containerd 2
// (built from the module proxy) and Debian's containerd 1.x print.
func TestContainerdVersionFact(t *testing.T) {
	for out, want := range map[string]string{
		"containerd github.com/containerd/containerd/v2 v2.4.2 \n":                          "v2.4.2",
		"containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1\n":          "1.6.20",
		"containerd containerd.io 1.7.27 05044ec0a9a75232cad458027ca83437aae3f4da\n":        "1.7.27",
		"containerd github.com/containerd/containerd/v2 v2.1.0-rc.1 f0d9a2a61be2a8f1a4e1\n": "v2.1.0-rc.1",
	} {
		rec := execrun.NewRecorder().OnStdout("containerd --version", out)
		for _, b := range []string{"etcd", "kubelet", "kube-apiserver", "keepalived", "cilium"} {
			rec.Missing(b)
		}
		c := &Collector{Runner: rec}
		if got := c.versions(context.Background())["containerd"]; got != want {
			t.Errorf("%q: version %q, want %q", out, got, want)
		}
	}
}

// TestMountsReadUpToItsBound reads a mount table of exactly MaxMountLines
// lines and refuses one a line longer.
func TestMountsReadUpToItsBound(t *testing.T) {
	for _, extra := range []int{0, 1} {
		proc := t.TempDir()
		mustMkdir(t, filepath.Join(proc, "self"))
		lines := strings.Repeat("/dev/sdb /mnt/kcore/x xfs rw 0 0\n", MaxMountLines+extra)
		writeTestFile(t, filepath.Join(proc, "self/mounts"), lines)
		c := &Collector{Root: "/", ProcDir: proc}
		m, err := c.mounts()
		if (err != nil) != (extra == 1) {
			t.Fatalf("%d lines past the bound: %v", extra, err)
		}
		if extra == 0 && len(m["/dev/sdb"]) != MaxMountLines {
			t.Fatalf("read %d mounts", len(m["/dev/sdb"]))
		}
	}
}

// ChartVersion reads the version line of a chart's Chart.yaml, quoted or
// not, within its first MaxChartFile bytes only.
func TestChartVersion(t *testing.T) {
	dir := t.TempDir()
	if v := ChartVersion(dir); v != "" {
		t.Errorf("no Chart.yaml: %q", v)
	}
	for content, want := range map[string]string{
		"name: cilium\nversion: \"1.20.2\"\n":                          "1.20.2",
		"name: cilium\nappVersion: 9\nversion: 1.19.0\n":               "1.19.0",
		strings.Repeat("# pad\n", MaxChartFile/6) + "version: 1.0.0\n": "",
	} {
		writeTestFile(t, filepath.Join(dir, "Chart.yaml"), content)
		if got := ChartVersion(dir); got != want {
			t.Errorf("ChartVersion of %.40q… = %q, want %q", content, got, want)
		}
	}
}
