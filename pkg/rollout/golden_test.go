package rollout

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// goldenCases are the rollout plans whose text and JSON are kept under testdata/.
func goldenCases() []struct {
	name string
	in   func() Input
} {
	return []struct {
		name string
		in   func() Input
	}{
		// The reference's ClusterUpdate against the lab cluster (1.37.2, etcd 3.7.3).
		{"reference-lab", labInput},
		{"reference-lab-blocked", func() Input {
			in := labInput()
			in.Controllers = replicas(56, 57, 55)
			find(in.Nodes, "node-103").Status.Ready = false
			return in
		}},
		{"minor-upgrade-batched", func() Input {
			u := update(func(s *api.UpdateSpec) {
				s.TestedOSPins.KubernetesVersion = "1.37.2"
				s.UpdateKind, s.Strategy, s.BatchSize, s.MaxUnavailable = api.UpdateKindK8s, api.StrategyBatched, 2, 2
				s.Approval = api.ApprovalAuto
			})
			return Input{Update: u, Clusters: []*api.KubernetesCluster{bigCluster()}, Nodes: bigNodes("1.36.4", "3.6.5"), Controllers: replicas(59, 59, 59)}
		}},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan(tc.in())
			var text bytes.Buffer
			if err := WriteText(&text, p, false); err != nil {
				t.Fatal(err)
			}
			js, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".txt", text.Bytes())
			golden(t, tc.name+".json", append(js, '\n'))
		})
	}
}

func TestWriteTextColor(t *testing.T) {
	var plain, color bytes.Buffer
	p := Plan(labInput())
	if err := WriteText(&plain, p, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&color, p, true); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Error("plain text has ANSI escapes")
	}
	if !bytes.Contains(color.Bytes(), []byte("\x1b[")) {
		t.Error("colour text has no ANSI escapes")
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/rollout -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./pkg/rollout -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
