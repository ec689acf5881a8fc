package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

func TestPlanDetailedExitCode(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	missing := a.write("missing.yaml", strings.Replace(labManifest(t), "node-107", "node-999", -1))
	tests := []struct {
		name  string
		setup func()
		path  string
		want  int
	}{
		{"changes", nil, lab, 2},
		{"blocked", nil, missing, 1},
		{"no changes", func() {
			a.must("kubernetes", "apply", "-f", lab, "--yes")
		}, lab, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			before := a.index()
			out, _, err := a.runIn(strings.NewReader(""), "kubernetes", "plan", "-f", tt.path, "--detailed-exitcode")
			code := 0
			if err != nil {
				code = ExitCode(err)
			}
			if code != tt.want {
				t.Fatalf("exit code %d (%v), want %d\n%s", code, err, tt.want, out)
			}
			if a.index() != before {
				t.Fatalf("plan moved the index %d → %d", before, a.index())
			}
		})
	}
	// Without --detailed-exitcode a plan with changes exits 0.
	if _, _, err := a.runIn(strings.NewReader(""), "kubernetes", "plan", "-f", a.write("edge.yaml", edgeManifest)); err != nil {
		t.Fatalf("plan with changes: %v", err)
	}
}

func TestDirectoryApplyAndPrune(t *testing.T) {
	a := newApplyEnv(t)
	dir := filepath.Join(a.dir, "clusters")
	a.write("clusters/lab.yaml", labManifest(t))
	edge := a.write("clusters/edge.yaml", edgeManifest)
	out := a.must("kubernetes", "apply", "-f", dir, "--yes")
	if !strings.Contains(out, "Plan: 2 to create") || strings.Count(out, "stored, phase bootstrapping") != 2 {
		t.Fatalf("directory apply:\n%s", out)
	}
	a.setStatus("edge", api.ClusterStatus{Phase: api.PhaseReady})
	if err := os.Remove(edge); err != nil {
		t.Fatal(err)
	}

	before := a.index()
	out = a.must("kubernetes", "apply", "-f", dir, "--yes")
	if !strings.Contains(out, "No changes.") || a.index() != before {
		t.Fatalf("apply without --prune changed something:\n%s", out)
	}
	out = a.must("kubernetes", "apply", "-f", dir, "--prune", "--yes")
	if !strings.Contains(out, `- delete cluster "edge"`) || !strings.Contains(out, `cluster "edge": stored, phase deleting`) {
		t.Fatalf("apply --prune:\n%s", out)
	}
	if kc, ok := a.cluster("edge"); !ok || kc.Status.Phase != api.PhaseDeleting {
		t.Fatalf("edge after prune = %+v, want phase deleting (the orchestrator removes it)", kc)
	}
	if kc, _ := a.cluster("lab"); kc.Status.Phase != api.PhaseBootstrapping {
		t.Fatalf("lab touched by the prune: %+v", kc.Status)
	}
}

func TestSavedPlan(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	saved := filepath.Join(a.dir, "lab.plan.json")
	out := a.must("kubernetes", "plan", "-f", lab, "--out", saved)
	if !strings.Contains(out, "Plan saved to "+saved) {
		t.Fatalf("plan --out:\n%s", out)
	}
	data, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Read(strings.NewReader(string(data))); err != nil {
		t.Fatalf("saved plan is not in the plan format: %v", err)
	}

	// A second saved plan goes stale when the first is applied.
	other := filepath.Join(a.dir, "other.plan.json")
	jsonOut := a.must("kubernetes", "plan", "-f", lab, "-o", "json", "--out", other)
	if !strings.HasPrefix(jsonOut, "{") {
		t.Fatalf("-o json:\n%s", jsonOut)
	}

	out = a.must("kubernetes", "apply", saved, "--yes")
	if !strings.Contains(out, `cluster "lab": stored, phase bootstrapping`) {
		t.Fatalf("apply saved plan:\n%s", out)
	}
	before := a.ctl.Node().State().KindIndex(api.KindKubernetesCluster)
	if _, _, err := a.runIn(strings.NewReader(""), "kubernetes", "apply", other, "--yes"); !errors.Is(err, ErrStalePlan) {
		t.Fatalf("stale saved plan = %v, want ErrStalePlan", err)
	}
	if after := a.ctl.Node().State().KindIndex(api.KindKubernetesCluster); after != before {
		t.Fatalf("stale plan wrote a cluster: index %d → %d", before, after)
	}

	// An edited plan file fails its hash check before anything is sent.
	if err := os.WriteFile(other, []byte(strings.Replace(string(data), "node-105", "node-106", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.runIn(strings.NewReader(""), "kubernetes", "apply", other, "--yes"); !errors.Is(err, plan.ErrHashMismatch) {
		t.Fatalf("edited plan = %v, want ErrHashMismatch", err)
	}
}

func TestManifestErrorsStayLocal(t *testing.T) {
	a := newApplyEnv(t)
	bad := a.write("bad.yaml", strings.Replace(labManifest(t), "clusterCidr", "clustrCidr", 1))
	update := a.write("update.yaml", "kind: ClusterUpdate\nmetadata:\n  name: u1\nspec:\n  version: 0.5.0\n  allNodes: true\n")
	before := a.index()
	_, errOut, err := a.runIn(strings.NewReader(""), "kubernetes", "apply", "-f", bad, "--yes")
	if !errors.Is(err, errManifests) || !strings.Contains(errOut, "bad.yaml:") {
		t.Fatalf("bad manifest = %v\n%s", err, errOut)
	}
	_, _, err = a.runIn(strings.NewReader(""), "kubernetes", "apply", "-f", update, "--yes")
	if err == nil || !strings.Contains(err.Error(), "kctl apply -f") {
		t.Fatalf("ClusterUpdate in kubernetes apply = %v", err)
	}
	if a.index() != before {
		t.Fatalf("index moved %d → %d", before, a.index())
	}
}

func TestBlockedApplySendsNothing(t *testing.T) {
	a := newApplyEnv(t)
	missing := a.write("missing.yaml", strings.Replace(labManifest(t), "node-107", "node-999", -1))
	before := a.index()
	out, _, err := a.runIn(answer("y\n"), "kubernetes", "apply", "-f", missing)
	if ExitCode(err) != 1 || !strings.Contains(out, "✗ BLOCKED") || !strings.Contains(out, "control-plane-not-registered") || strings.Contains(out, "Apply this plan?") {
		t.Fatalf("blocked apply = %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "✗ BLOCKED") {
		t.Fatalf("blocking issues are not printed first:\n%s", out)
	}
	if a.index() != before {
		t.Fatalf("blocked apply moved the index %d → %d", before, a.index())
	}
}

func TestDiff(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("edge.yaml", edgeManifest), "--yes")
	a.setStatus("edge", api.ClusterStatus{Phase: api.PhaseReady})
	changed := a.write("edge2.yaml", strings.Replace(edgeManifest, "clusterDns: 10.97.0.10", "clusterDns: 10.97.0.53", 1))
	out, _, err := a.runIn(strings.NewReader(""), "kubernetes", "diff", "-f", changed)
	if ExitCode(err) != diffExitDiffers {
		t.Fatalf("diff with differences = %v (exit %d), want exit %d", err, ExitCode(err), diffExitDiffers)
	}
	if out != "~ cluster \"edge\"\n    ~ spec.clusterDns: \"10.97.0.10\" → \"10.97.0.53\"\n" {
		t.Fatalf("diff:\n%q", out)
	}
	if out, _, err := a.runIn(strings.NewReader(""), "kubernetes", "diff", "-f", a.write("same.yaml", edgeManifest)); err != nil {
		t.Fatalf("diff without differences = %v, want exit 0\n%s", err, out)
	}
	_, _, err = a.runIn(strings.NewReader(""), "kubernetes", "diff", "-f", a.write("bad.yaml", "kind: KubernetesCluster\nspec: [\n"))
	if ExitCode(err) != diffExitError {
		t.Fatalf("diff of a broken manifest = %v (exit %d), want exit %d", err, ExitCode(err), diffExitError)
	}
}

// TestWarningsSaidOnce: a manifest warning is printed once, with its file
// and line, not again in the plan; a value defaulting replaces is warned
// about.
func TestWarningsSaidOnce(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", strings.ReplaceAll(labManifest(t), "192.168.40.200:6443", "192.168.40.200:7443"))
	out, errOut, err := a.runIn(strings.NewReader(""), "kubernetes", "plan", "-f", lab)
	if err != nil && ExitCode(err) != 1 {
		t.Fatalf("plan: %v\n%s%s", err, out, errOut)
	}
	all := out + errOut
	for _, w := range []string{"cilium is replaced by bridge", "ignored: the cluster uses bridge CNI"} {
		if n := strings.Count(all, w); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", w, n, all)
		}
	}
	if !strings.Contains(errOut, "lab.yaml:9: warning: spec.cni") {
		t.Errorf("the override warning does not name file and line:\n%s", errOut)
	}
}

// TestPruneOfNothingRefused: an empty manifest directory with --prune does
// not plan the deletion of every stored cluster unless --allow-empty says so.
func TestPruneOfNothingRefused(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("edge.yaml", edgeManifest), "--yes")
	a.setStatus("edge", api.ClusterStatus{Phase: api.PhaseReady})
	empty := a.write("gitops/empty.yaml", "")
	dir := filepath.Dir(empty)
	for _, cmd := range [][]string{
		{"kubernetes", "plan", "-f", dir, "--prune"},
		{"kubernetes", "apply", "-f", dir, "--prune", "--yes"},
		{"kubernetes", "diff", "-f", dir, "--prune"},
	} {
		if _, _, err := a.runIn(strings.NewReader(""), cmd...); !errors.Is(err, ErrEmptyPrune) {
			t.Errorf("%v = %v, want ErrEmptyPrune", cmd, err)
		}
	}
	if _, ok := a.cluster("edge"); !ok {
		t.Fatal("a prune of nothing deleted the cluster")
	}
	out, _, _ := a.runIn(strings.NewReader(""), "kubernetes", "plan", "-f", dir, "--prune", "--allow-empty")
	if !strings.Contains(out, `- delete cluster "edge"`) {
		t.Fatalf("--allow-empty plan:\n%s", out)
	}
}
