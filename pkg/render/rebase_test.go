package render

import (
	"reflect"
	"strings"
	"testing"
)

func TestRebase(t *testing.T) {
	_, states := renderCase(t, "bridge", Options{})
	ns := states["node-105"]
	moved := Rebase(ns, "/tmp/lab/n1/")
	if Hash(ns) == Hash(moved) {
		t.Fatal("rebase changed nothing")
	}
	if !reflect.DeepEqual(Rebase(ns, ""), ns) || !reflect.DeepEqual(Rebase(ns, "/"), ns) {
		t.Fatal("rebase to / changed the state")
	}
	for i, u := range moved.Units {
		if u.Argv[0] != ns.Units[i].Argv[0] || u.InputHash != ns.Units[i].InputHash {
			t.Errorf("%s: argv[0] or input hash moved", u.Name)
		}
	}
	etcd := strings.Join(unitByName(moved, UnitEtcd).Argv, " ")
	for _, want := range []string{
		"--data-dir=/tmp/lab/n1/var/lib/etcd",
		"--trusted-ca-file=/tmp/lab/n1/etc/kubernetes/pki/etcd/ca.crt",
		"--listen-client-urls=https://192.168.40.105:2379,https://127.0.0.1:2379",
	} {
		if !strings.Contains(etcd, want) {
			t.Errorf("etcd argv lacks %q: %s", want, etcd)
		}
	}
	kubelet := fileByPath(moved, KubeletConfigPath)
	for _, want := range []string{
		"clientCAFile: /tmp/lab/n1/etc/kubernetes/pki/ca.crt",
		"containerRuntimeEndpoint: unix:///tmp/lab/n1/run/containerd/containerd.sock",
	} {
		if !strings.Contains(kubelet.Content, want) {
			t.Errorf("kubelet config lacks %q:\n%s", want, kubelet.Content)
		}
	}
	// Nodes sharing a machine keep their own address reservations: with one
	// host-local cursor, each node restarts its scan at its range's first
	// free address and hands a pod's address to the next pod at once.
	if cni := fileByPath(moved, BridgeCNIPath).Content; !strings.Contains(cni, `"dataDir": "/tmp/lab/n1/var/lib/cni/networks"`) {
		t.Errorf("bridge CNI's IPAM data dir not moved:\n%s", cni)
	}
	if got := unitByName(moved, UnitContainerd).CRIEndpoint; got != "unix:///tmp/lab/n1/run/containerd/containerd.sock" {
		t.Errorf("containerd's CRI endpoint not moved with its socket: %q", got)
	}
	if fileByPath(moved, KubeletConfigPath) == nil {
		t.Error("file paths were moved; the agent resolves them itself")
	}
	if got := strings.Join(taskByName(moved, TaskAddons).Argv, " "); !strings.Contains(got, "--kubeconfig=/tmp/lab/n1/etc/kubernetes/admin.conf") {
		t.Errorf("addons task argv: %s", got)
	}
	for _, f := range moved.Files {
		if strings.Contains(f.Content, "/tmp/lab/n1/tmp/lab/n1") {
			t.Errorf("%s moved twice", f.Path)
		}
	}
	if strings.Contains(fileByPath(moved, CoreDNSPath).Content, "/tmp/lab/n1") {
		t.Error("rebase touched an in-cluster path (CoreDNS reads /etc/resolv.conf inside its pod)")
	}
}
