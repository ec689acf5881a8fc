package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/runtime"
)

// crashingRuntime kills the apply (cancels its context) at the first unit,
// i.e. right after volumes and files, like an agent dying mid-apply.
type crashingRuntime struct {
	runtime.Runtime
	cancel context.CancelFunc
}

func (c crashingRuntime) Ensure(ctx context.Context, u api.Unit) (bool, error) {
	c.cancel()
	return false, context.Canceled
}

func TestAgentRestartedMidApplyConverges(t *testing.T) {
	root := t.TempDir()
	rec := execrun.NewRecorder()
	ns := labState(3, "KEY", "kubelet", "e1", "a1")

	// 1. The first agent dies after writing the files.
	sup1 := newSupervisor(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	a1 := newApplier(root, crashingRuntime{Runtime: sup1, cancel: cancel}, rec)
	if _, err := a1.Apply(ctx, []api.NodeState{ns}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted apply: %v", err)
	}
	sup1.Close()
	if _, err := os.Stat(filepath.Join(root, "etc/kubernetes/kubelet.conf")); err != nil {
		t.Fatalf("files were not written before the crash: %v", err)
	}

	// 2. A new agent on the same root converges.
	sup2 := newSupervisor(t, root)
	a2 := newApplier(root, sup2, rec)
	reps := applyUntilSettled(t, a2, ns)
	for p, msg := range itemMessages(reps, KindFile) {
		if msg == "written" {
			t.Errorf("%s rewritten after the restart", p)
		}
	}
	pids := map[string]int{}
	for _, u := range []string{"kcore-etcd", "kcore-kube-apiserver"} {
		pids[u] = pidOf(t, sup2, u)
	}
	sup2.Close()

	// 3. Another restart: units are adopted, tasks are not re-run, nothing is rewritten.
	sup3 := newSupervisor(t, root)
	stopAll(t, sup3)
	a3 := newApplier(root, sup3, rec)
	reps = applyUntilSettled(t, a3, ns)
	for u, pid := range pids {
		if got := pidOf(t, sup3, u); got != pid {
			t.Errorf("%s restarted by the agent restart: pid %d -> %d", u, pid, got)
		}
	}
	for _, it := range reps[0].Items {
		if it.Message != "" {
			t.Errorf("%s %s did work after a restart: %q", it.Kind, it.Name, it.Message)
		}
	}
	for _, bin := range []string{"nft", "kubectl"} {
		if n := countCommands(rec, bin); n != 1 {
			t.Errorf("task %s ran %d times, want once", bin, n)
		}
	}

	// 4. The result is identical to one uninterrupted apply on a fresh root.
	fresh := t.TempDir()
	supF := newSupervisor(t, fresh)
	stopAll(t, supF)
	applyUntilSettled(t, newApplier(fresh, supF, execrun.NewRecorder()), ns)
	assertSameTree(t, fresh, root, "/etc")
	names3, _ := sup3.List(context.Background())
	namesF, _ := supF.List(context.Background())
	if len(names3) != len(namesF) {
		t.Fatalf("units %v vs %v", names3, namesF)
	}
}

// assertSameTree compares the files (content and mode) under sub of two roots.
func assertSameTree(t *testing.T, want, got, sub string) {
	t.Helper()
	wf, gf := treeFiles(t, filepath.Join(want, sub)), treeFiles(t, filepath.Join(got, sub))
	if len(wf) != len(gf) {
		t.Fatalf("files %v, want %v", gf, wf)
	}
	for i, p := range wf {
		if gf[i] != p {
			t.Fatalf("files %v, want %v", gf, wf)
		}
		a, _ := os.ReadFile(filepath.Join(want, sub, p))
		b, _ := os.ReadFile(filepath.Join(got, sub, p))
		sa, _ := os.Stat(filepath.Join(want, sub, p))
		sb, _ := os.Stat(filepath.Join(got, sub, p))
		if !bytes.Equal(a, b) || sa.Mode() != sb.Mode() {
			t.Errorf("%s differs", p)
		}
	}
}
