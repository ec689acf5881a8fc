package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/pkg/render/kubeflags"
)

func TestLongestGap(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// p is a probe sent at ms, answered 10 ms later.
	p := func(ms int, ok bool) probe { return probe{sent: at(ms), answered: at(ms + 10), ok: ok} }
	tests := []struct {
		name   string
		probes []probe
		gap    time.Duration
		failed int
	}{
		{"none", nil, 0, 0},
		{"all answered", []probe{p(0, true), p(100, true)}, 0, 0},
		{"one failure: its send to the next answer", []probe{p(0, true), p(100, false), p(200, true)}, 110 * time.Millisecond, 1},
		{"the longer of two stretches", []probe{p(0, false), p(100, true), p(200, false), p(300, false), p(400, false), p(500, true)}, 310 * time.Millisecond, 4},
		{"a stretch to the end counts to the last answer", []probe{p(0, true), p(100, false), p(200, false)}, 110 * time.Millisecond, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gap, failed := longestGap(tc.probes)
			if gap != tc.gap || failed != tc.failed {
				t.Errorf("longestGap = %s, %d failed; want %s, %d", gap, failed, tc.gap, tc.failed)
			}
		})
	}
}

// The rolling update's manifest is the lab cluster with one more
// kube-apiserver flag, and each run's differs from the last.
func TestRollManifest(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var prev string
	for _, hours := range []int{2, 3} {
		f, err := rollManifest(filepath.Join(repo, labManifest), dir, hours)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, ds := manifest.Parse(f, data)
		if ds.HasErrors() || len(docs) != 1 {
			t.Fatalf("roll manifest: %d documents, diagnostics %v", len(docs), ds)
		}
		c, ok := docs[0].Object.(*api.KubernetesCluster)
		if !ok || c.Metadata.Name != labCluster {
			t.Fatalf("roll manifest holds %T %v, want the lab cluster", docs[0].Object, docs[0].Name)
		}
		got := c.Spec.ExtraArgs(kubeflags.APIServer)["event-ttl"]
		if got == "" || got == prev {
			t.Errorf("run with %dh: event-ttl %q (previous %q): each run must change the flag", hours, got, prev)
		}
		prev = got
	}
}
