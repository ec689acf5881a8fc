package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/runtime"
)

func labState(gen int64, caKey, kubeletConf, etcdHash, apiHash string) api.NodeState {
	return api.NodeState{
		Cluster: "lab", NodeID: "node-105", Generation: gen,
		Files: []api.File{
			{Path: "/etc/kubernetes/pki/ca.key", Mode: 0o600, Content: caKey, Secret: true},
			{Path: "/etc/kubernetes/kubelet.conf", Mode: 0o644, Content: kubeletConf},
			{Path: "/etc/keepalived/keepalived.conf", Content: "vrrp_instance kcore_api {}\n"},
		},
		Units: []api.Unit{
			helperUnit("kcore-kube-apiserver", "serve", apiHash, "kcore-etcd"),
			helperUnit("kcore-etcd", "serve", etcdHash),
			helperUnit("kcore-kubernetes-cilium", "oneshot", "c1", "kcore-kube-apiserver"),
		},
		Tasks: []api.Task{
			{Name: "kcore-nftables", Argv: []string{"nft", "-f", "/etc/nftables.d/kcore.nft"}, InputHash: "n1"},
			{Name: "kcore-kubernetes-provisioner", Argv: []string{"kubectl", "apply", "-f", "/etc/kubernetes/provisioner.yaml"},
				After: []string{"kcore-kubernetes-cilium", "kcore-nftables"}, InputHash: "p1"},
		},
	}
}

func newApplier(root string, rt runtime.Runtime, rec execrun.Runner) *Applier {
	return &Applier{Root: root, Runtime: rt, Runner: rec}
}

// applyUntilSettled applies until nothing is pending (units come up over a few passes).
func applyUntilSettled(t *testing.T, a *Applier, states ...api.NodeState) []api.NodeReport {
	t.Helper()
	var reps []api.NodeReport
	waitFor(t, "apply to settle", func() bool {
		var err error
		reps, err = a.Apply(context.Background(), states)
		if err != nil {
			t.Fatal(err)
		}
		return !Pending(reps)
	})
	return reps
}

func itemMessages(reps []api.NodeReport, kind string) map[string]string {
	out := map[string]string{}
	for _, r := range reps {
		for _, it := range r.Items {
			if it.Kind == kind {
				out[it.Name] = it.Message
			}
		}
	}
	return out
}

func TestApplyWritesFilesWithModes(t *testing.T) {
	root := t.TempDir()
	a := newApplier(root, &fakeRuntime{}, execrun.NewRecorder())
	ns := labState(1, "KEY", "kubelet", "e1", "a1")
	ns.Units, ns.Tasks = nil, nil
	reps, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil || Pending(reps) {
		t.Fatalf("apply: %v %+v", err, reps)
	}
	tests := []struct {
		path    string
		mode    os.FileMode
		content string
	}{
		{"/etc/kubernetes/pki/ca.key", 0o600, "KEY"},
		{"/etc/kubernetes/kubelet.conf", 0o644, "kubelet"},
		{"/etc/keepalived/keepalived.conf", DefaultFileMode, "vrrp_instance kcore_api {}\n"},
	}
	for _, tt := range tests {
		st, err := os.Stat(filepath.Join(root, tt.path))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != tt.mode {
			t.Errorf("%s mode %o, want %o", tt.path, st.Mode().Perm(), tt.mode)
		}
		if data, _ := os.ReadFile(filepath.Join(root, tt.path)); string(data) != tt.content {
			t.Errorf("%s = %q", tt.path, data)
		}
	}
	reps, _ = a.Apply(context.Background(), []api.NodeState{ns})
	for p, msg := range itemMessages(reps, KindFile) {
		if msg != "" {
			t.Errorf("unchanged %s rewritten (%q)", p, msg)
		}
	}
	// Mode drift is repaired.
	os.Chmod(filepath.Join(root, "/etc/kubernetes/pki/ca.key"), 0o644)
	reps, _ = a.Apply(context.Background(), []api.NodeState{ns})
	if itemMessages(reps, KindFile)["/etc/kubernetes/pki/ca.key"] != "written" {
		t.Fatal("a key with a wrong mode was not rewritten")
	}
}

func TestApplyRefusesPathsOutsideTheAllowList(t *testing.T) {
	for _, bad := range []string{"/etc/passwd", "/etc/kubernetes/../passwd", "etc/kubernetes/x", "/root/.ssh/authorized_keys", "/mnt/kcore/../../etc/shadow"} {
		t.Run(bad, func(t *testing.T) {
			root := t.TempDir()
			rt := &fakeRuntime{}
			rec := execrun.NewRecorder()
			a := newApplier(root, rt, rec)
			ns := labState(1, "KEY", "kubelet", "e1", "a1")
			ns.Files = append(ns.Files, api.File{Path: bad, Content: "owned"})
			reps, err := a.Apply(context.Background(), []api.NodeState{ns})
			if err != nil {
				t.Fatal(err)
			}
			var refused bool
			for _, it := range reps[0].Items {
				if it.Kind == KindFile && it.Name == bad && it.State == api.ItemFailed {
					refused = true
				}
				if it.State == api.ItemOK {
					t.Errorf("item %s %s applied from a refused state", it.Kind, it.Name)
				}
			}
			if !refused {
				t.Fatalf("bad path not reported: %+v", reps)
			}
			if written := treeFiles(t, root); len(written) != 1 || written[0] != StatePath {
				t.Fatalf("files written: %v", written)
			}
			if len(rt.calls) != 0 || len(rec.Commands()) != 0 {
				t.Fatalf("ran %v %v", rt.calls, rec.Commands())
			}
		})
	}
}

func TestApplyRestartsOnlyWhatChanged(t *testing.T) {
	root := t.TempDir()
	sup := newSupervisor(t, root)
	stopAll(t, sup)
	rec := execrun.NewRecorder()
	a := newApplier(root, sup, rec)
	ns := labState(1, "KEY", "kubelet", "e1", "a1")
	applyUntilSettled(t, a, ns)
	etcd, api1 := pidOf(t, sup, "kcore-etcd"), pidOf(t, sup, "kcore-kube-apiserver")

	// The render changed one file and, with it, the API server's hash.
	ns2 := labState(2, "KEY", "kubelet v2", "e1", "a2")
	reps := applyUntilSettled(t, a, ns2)
	if got := pidOf(t, sup, "kcore-etcd"); got != etcd {
		t.Fatalf("etcd restarted (%d -> %d) though its hash did not change", etcd, got)
	}
	if got := pidOf(t, sup, "kcore-kube-apiserver"); got == api1 {
		t.Fatal("the API server kept running with stale inputs")
	}
	if processAlive(api1) {
		t.Fatal("the old API server process is still alive")
	}
	msgs := itemMessages(reps, KindFile)
	if msgs["/etc/kubernetes/kubelet.conf"] == "" || msgs["/etc/kubernetes/pki/ca.key"] != "" {
		t.Fatalf("file messages %v", msgs)
	}
	if reps[0].ObservedGeneration != 2 {
		t.Fatalf("observed generation %d", reps[0].ObservedGeneration)
	}
	if n := countCommands(rec, "nft"); n != 1 {
		t.Fatalf("nftables task ran %d times", n)
	}
}

func TestApplyStopsRemovedUnitsAndFiles(t *testing.T) {
	root := t.TempDir()
	sup := newSupervisor(t, root)
	stopAll(t, sup)
	a := newApplier(root, sup, execrun.NewRecorder())
	ns := labState(1, "KEY", "kubelet", "e1", "a1")
	applyUntilSettled(t, a, ns)
	api1 := pidOf(t, sup, "kcore-kube-apiserver")

	ns.Units = ns.Units[1:] // drop the API server
	ns.Units[1].After = nil
	ns.Files = ns.Files[1:] // drop the CA key
	ns.Tasks = nil
	applyUntilSettled(t, a, ns)
	if processAlive(api1) {
		t.Fatal("removed unit still running")
	}
	if _, err := sup.Status(context.Background(), "kcore-kube-apiserver"); !errors.Is(err, runtime.ErrUnknownUnit) {
		t.Fatalf("removed unit still known: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "/etc/kubernetes/pki/ca.key")); !os.IsNotExist(err) {
		t.Fatalf("removed file still there: %v", err)
	}

	// The whole cluster disappears: everything kcore started and wrote goes.
	etcd := pidOf(t, sup, "kcore-etcd")
	if _, err := a.Apply(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if processAlive(etcd) {
		t.Fatal("unit of a removed cluster still running")
	}
	if left := treeFiles(t, filepath.Join(root, "etc")); len(left) != 0 {
		t.Fatalf("files of a removed cluster left: %v", left)
	}
}

func TestApplyKeepsGoingPastFailures(t *testing.T) {
	root := t.TempDir()
	rec := execrun.NewRecorder().OnExit("nft -f /etc/nftables.d/kcore.nft", 1, "syntax error")
	rec.On("nft -f /etc/nftables.d/kcore.nft", execrun.Result{}, nil)
	rt := &fakeRuntime{fail: map[string]bool{"kcore-etcd": true}}
	a := newApplier(root, rt, rec)
	ns := labState(1, "KEY", "kubelet", "e1", "a1")
	ns.Tasks = append(ns.Tasks, api.Task{Name: "independent", Argv: []string{"true"}, InputHash: "i"})
	reps, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range reps[0].Items {
		got[it.Kind+" "+it.Name] = it.State
	}
	want := map[string]string{
		"file /etc/kubernetes/pki/ca.key":      api.ItemOK,
		"unit kcore-etcd":                      api.ItemFailed,
		"unit kcore-kube-apiserver":            api.ItemPending,
		"task kcore-nftables":                  api.ItemFailed,
		"task kcore-kubernetes-provisioner":    api.ItemPending,
		"task independent":                     api.ItemOK,
		"file /etc/keepalived/keepalived.conf": api.ItemOK,
		"unit kcore-kubernetes-cilium":         api.ItemPending,
		"file /etc/kubernetes/kubelet.conf":    api.ItemOK,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// The failed task is retried on the next apply; the finished one is not.
	a.Apply(context.Background(), []api.NodeState{ns})
	if n := countCommands(rec, "nft"); n != 2 {
		t.Fatalf("nft ran %d times, want 2", n)
	}
	if n := countCommands(rec, "true"); n != 1 {
		t.Fatalf("finished task ran %d times", n)
	}
}

func TestOrderUnits(t *testing.T) {
	units := []api.Unit{
		{Name: "c", After: []string{"b"}}, {Name: "b", After: []string{"a", "external"}}, {Name: "a"},
		{Name: "x", After: []string{"y"}}, {Name: "y", After: []string{"x"}},
	}
	ordered, cyclic := orderUnits(units)
	var names, cyc []string
	for _, u := range ordered {
		names = append(names, u.Name)
	}
	for _, u := range cyclic {
		cyc = append(cyc, u.Name)
	}
	if strings.Join(names, ",") != "a,b,c" || strings.Join(cyc, ",") != "x,y" {
		t.Fatalf("ordered %v cyclic %v", names, cyc)
	}
}

// treeFiles lists the regular files under dir, as absolute host paths relative to dir.
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, "/"+rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func countCommands(rec *execrun.Recorder, bin string) int {
	n := 0
	for _, c := range rec.Calls() {
		if filepath.Base(c[0]) == bin {
			n++
		}
	}
	return n
}

// fakeRuntime records calls; units are instantly ready unless told to fail
// (fail: Ensure; failReload: Reload).
type fakeRuntime struct {
	calls      []string
	units      map[string]api.Unit
	fail       map[string]bool
	failReload map[string]bool
	// pid is every running unit's PID (0: 1).
	pid int
}

func (f *fakeRuntime) Reload(_ context.Context, name string) error {
	f.calls = append(f.calls, "reload "+name)
	if f.failReload[name] {
		return errors.New("cannot signal")
	}
	if _, ok := f.units[name]; !ok {
		return runtime.ErrUnknownUnit
	}
	return nil
}

func (f *fakeRuntime) Ensure(_ context.Context, u api.Unit) (bool, error) {
	f.calls = append(f.calls, "ensure "+u.Name)
	if f.fail[u.Name] {
		return false, errors.New("cannot start")
	}
	if f.units == nil {
		f.units = map[string]api.Unit{}
	}
	old, ok := f.units[u.Name]
	f.units[u.Name] = u
	return !ok || old.InputHash != u.InputHash, nil
}

func (f *fakeRuntime) Stop(_ context.Context, name string) error {
	f.calls = append(f.calls, "stop "+name)
	delete(f.units, name)
	return nil
}

func (f *fakeRuntime) Status(_ context.Context, name string) (runtime.UnitStatus, error) {
	u, ok := f.units[name]
	if !ok {
		if f.fail[name] {
			return runtime.UnitStatus{Name: name, State: runtime.StateFailed}, nil
		}
		return runtime.UnitStatus{}, runtime.ErrUnknownUnit
	}
	if u.Oneshot {
		return runtime.UnitStatus{Name: name, State: runtime.StateExited, Oneshot: true}, nil
	}
	return runtime.UnitStatus{Name: name, State: runtime.StateRunning, PID: max(1, f.pid)}, nil
}

func (f *fakeRuntime) List(context.Context) ([]string, error) {
	return sortedKeys(f.units), nil
}

func TestApplyWaitsForHealthyDependencies(t *testing.T) {
	root := t.TempDir()
	rt := &fakeRuntime{}
	healthy := false
	a := newApplier(root, rt, execrun.NewRecorder())
	a.UnitSettle, a.DependencyWait = 10*time.Millisecond, 10*time.Millisecond
	a.Health = func(_ context.Context, url string) error {
		if url != "https://127.0.0.1:6443/readyz" || !healthy {
			return errors.New("not ready")
		}
		return nil
	}
	ns := api.NodeState{Cluster: "lab", NodeID: "n", Generation: 1, Units: []api.Unit{
		{Name: "kcore-kube-apiserver", Argv: []string{"kube-apiserver"}, InputHash: "a", HealthURL: "https://127.0.0.1:6443/readyz"},
		{Name: "kcore-kubernetes-cilium", Argv: []string{"cilium", "install"}, Oneshot: true, InputHash: "c", After: []string{"kcore-kube-apiserver"}},
	}}
	states := func(reps []api.NodeReport) string {
		var out []string
		for _, it := range reps[0].Items {
			out = append(out, it.Name+"="+it.State)
		}
		return strings.Join(out, " ")
	}
	reps, _ := a.Apply(context.Background(), []api.NodeState{ns})
	if got := states(reps); got != "kcore-kube-apiserver=pending kcore-kubernetes-cilium=pending" {
		t.Fatalf("unhealthy API server: %s", got)
	}
	healthy = true
	reps, _ = a.Apply(context.Background(), []api.NodeState{ns})
	if got := states(reps); got != "kcore-kube-apiserver=ok kcore-kubernetes-cilium=ok" {
		t.Fatalf("healthy API server: %s", got)
	}
}

// TestUnitsNothingWaitsForDoNotHoldOthersBack: a started unit only holds
// back the units and tasks after it, and the settle time is long (an hour).
// kube-apiserver turns ready only once the kubelet (later in the order, and
// waiting for nothing) was started; kube-proxy turns healthy only once the
// add-ons task ran. Both must happen while the others still settle, and
// the apply reports everything ok.
func TestUnitsNothingWaitsForDoNotHoldOthersBack(t *testing.T) {
	rec := execrun.NewRecorder()
	rt := &fakeRuntime{}
	a := newApplier(t.TempDir(), rt, rec)
	a.UnitSettle = time.Hour
	a.Health = func(_ context.Context, url string) error {
		switch {
		case url == "http://127.0.0.1:10256/healthz" && countCommands(rec, "kubectl") == 0:
			return errors.New("kube-proxy waits for the add-ons")
		case url == "https://127.0.0.1:6443/readyz" && !slices.Contains(rt.calls, "ensure kcore-kubelet"):
			return errors.New("kube-apiserver waits for the kubelet")
		}
		return nil
	}
	ns := api.NodeState{Cluster: "lab", NodeID: "n", Generation: 1,
		Units: []api.Unit{
			{Name: "kcore-kube-proxy", Argv: []string{"kube-proxy"}, InputHash: "p", HealthURL: "http://127.0.0.1:10256/healthz"},
			{Name: "kcore-kube-apiserver", Argv: []string{"kube-apiserver"}, InputHash: "a", HealthURL: "https://127.0.0.1:6443/readyz"},
			{Name: "kcore-kube-scheduler", Argv: []string{"kube-scheduler"}, InputHash: "s", After: []string{"kcore-kube-apiserver"}},
			{Name: "kcore-kubelet", Argv: []string{"kubelet"}, InputHash: "k"},
		},
		Tasks: []api.Task{{Name: "kcore-kubernetes-addons", Argv: []string{"kubectl", "apply"}, InputHash: "t", After: []string{"kcore-kube-apiserver"}}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reps, err := a.Apply(ctx, []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range reps[0].Items {
		if it.State != api.ItemOK {
			t.Errorf("%s %s is %s (%s): a unit nothing waits for held the others back", it.Kind, it.Name, it.State, it.Message)
		}
	}
}
