package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// edgeState is a second cluster's state on node-105. collide makes it take
// the lab's CA key and etcd unit, as two clusters rendered with the same
// names would.
func edgeState(collide bool) api.NodeState {
	ns := api.NodeState{
		Cluster: "edge", NodeID: "node-105", Generation: 1,
		Files: []api.File{{Path: "/etc/kubernetes/clusters/edge/admin.conf", Mode: 0o600, Content: "EDGE ADMIN", Secret: true}},
		Units: []api.Unit{helperUnit("kcore-s1-etcd", "serve", "s1")},
	}
	if collide {
		ns.Files = append(ns.Files, api.File{Path: "/etc/kubernetes/pki/ca.key", Mode: 0o600, Content: "EDGE KEY", Secret: true})
		ns.Units = append(ns.Units, helperUnit("kcore-etcd", "serve", "edge-etcd"))
	}
	return ns
}

func reportOf(reps []api.NodeReport, cluster string) api.NodeReport {
	for _, r := range reps {
		if r.Cluster == cluster {
			return r
		}
	}
	return api.NodeReport{}
}

// TestApplyRefusesWhatAnotherClusterOwns applies the lab, then a second
// cluster's state that would overwrite the lab's CA key and restart its
// etcd: the second state is refused whole, naming what the lab owns, and
// the lab's key and unit are untouched; with names of its own it applies.
func TestApplyRefusesWhatAnotherClusterOwns(t *testing.T) {
	root := t.TempDir()
	rt := &fakeRuntime{}
	a := newApplier(root, rt, execrun.NewRecorder())
	lab := labState(1, "KEY", "kubelet", "e1", "a1")
	applyUntilSettled(t, a, lab)
	calls := len(rt.calls)
	labEtcd := rt.units["kcore-etcd"]

	reps, err := a.Apply(context.Background(), []api.NodeState{lab, edgeState(true)})
	if err != nil {
		t.Fatal(err)
	}
	edge := reportOf(reps, "edge")
	failed := map[string]string{}
	for _, it := range edge.Items {
		switch it.State {
		case api.ItemOK:
			t.Errorf("%s %s of the refused state applied", it.Kind, it.Name)
		case api.ItemFailed:
			failed[it.Kind+" "+it.Name] = it.Message
		}
	}
	for _, want := range []string{"file /etc/kubernetes/pki/ca.key", "unit kcore-etcd"} {
		if !strings.Contains(failed[want], "owned by another cluster lab") {
			t.Errorf("%s: %q, want it refused as the lab's", want, failed[want])
		}
	}
	if data, _ := os.ReadFile(filepath.Join(root, "/etc/kubernetes/pki/ca.key")); string(data) != "KEY" {
		t.Fatalf("the lab's CA key is now %q", data)
	}
	if _, err := os.Stat(filepath.Join(root, "/etc/kubernetes/clusters/edge/admin.conf")); !os.IsNotExist(err) {
		t.Fatalf("a file of the refused state was written: %v", err)
	}
	for _, c := range rt.calls[calls:] {
		if strings.HasSuffix(c, " kcore-etcd") && c != "ensure kcore-etcd" || strings.Contains(c, "kcore-s1-etcd") {
			t.Fatalf("runtime call %q for the refused state", c)
		}
	}
	if rt.units["kcore-etcd"].InputHash != labEtcd.InputHash {
		t.Fatalf("the lab's etcd now runs %+v", rt.units["kcore-etcd"])
	}
	if r := reportOf(reps, "lab"); Pending([]api.NodeReport{r}) {
		t.Fatalf("the lab's own state did not apply: %+v", r)
	}

	reps = applyUntilSettled(t, a, lab, edgeState(false))
	if r := reportOf(reps, "edge"); len(r.Items) == 0 {
		t.Fatal("edge with names of its own reported nothing")
	}
	if data, _ := os.ReadFile(filepath.Join(root, "/etc/kubernetes/clusters/edge/admin.conf")); string(data) != "EDGE ADMIN" {
		t.Fatalf("edge's admin.conf = %q", data)
	}
}

// TestTearingDownOneClusterLeavesTheOther deletes the second cluster from
// the node (its state is no longer rendered): its own file and unit go,
// the lab's CA key and etcd stay.
func TestTearingDownOneClusterLeavesTheOther(t *testing.T) {
	root := t.TempDir()
	rt := &fakeRuntime{}
	a := newApplier(root, rt, execrun.NewRecorder())
	lab := labState(1, "KEY", "kubelet", "e1", "a1")
	applyUntilSettled(t, a, lab, edgeState(false))
	applyUntilSettled(t, a, lab)
	if _, err := os.Stat(filepath.Join(root, "/etc/kubernetes/clusters/edge/admin.conf")); !os.IsNotExist(err) {
		t.Fatalf("edge's admin.conf survived its teardown: %v", err)
	}
	if _, ok := rt.units["kcore-s1-etcd"]; ok {
		t.Fatal("edge's etcd survived its teardown")
	}
	if data, _ := os.ReadFile(filepath.Join(root, "/etc/kubernetes/pki/ca.key")); string(data) != "KEY" {
		t.Fatalf("the lab's CA key is now %q", data)
	}
	if _, ok := rt.units["kcore-etcd"]; !ok {
		t.Fatal("tearing edge down stopped the lab's etcd")
	}
}
