package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/orchestrator"
)

// health shows the Addons condition in its summary, blocked or not, and
// -o json carries it.
func TestHealthShowsAddons(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("lab.yaml", labManifest(t)), "--yes")
	blocked := "kube-system/coredns 1/2 available: pod coredns-b: ImagePullBackOff: image registry.k8s.io/coredns/coredns:v1.12.1 cannot be pulled on node node-107: dial tcp: connection refused"
	a.setStatus("lab", api.ClusterStatus{
		Phase: api.PhaseReady, LastHealthCheck: "2026-11-29T21:00:00Z",
		Conditions: []api.Condition{
			{Type: orchestrator.CondAPIReady, Status: "True", Reason: "Healthy", Since: "2026-11-29T20:00:00Z"},
			{Type: orchestrator.CondAddons, Status: "False", Reason: "ImagePullBackOff", Message: blocked, Since: "2026-11-29T20:59:30Z"},
		},
	})
	out := a.must("kubernetes", "health", "lab")
	summary := strings.SplitN(out, "\n\n", 2)[0]
	want := "add-ons: not available since 2026-11-29T20:59:30Z: ImagePullBackOff " + blocked
	if !strings.Contains(summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}

	var rep struct {
		Addons *struct {
			State, Message, Last string
			OK                   bool
		} `json:"addons"`
	}
	if err := json.Unmarshal([]byte(a.must("kubernetes", "health", "lab", "-o", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Addons == nil || rep.Addons.OK || rep.Addons.State != "False" || !strings.Contains(rep.Addons.Message, "node node-107") {
		t.Errorf("-o json addons = %+v, want not ok naming node-107", rep.Addons)
	}

	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, Conditions: []api.Condition{
		{Type: orchestrator.CondAddons, Status: "True", Reason: "Available", Message: "kube-system/coredns 2/2 available"},
	}})
	if out := a.must("kubernetes", "health", "lab"); !strings.Contains(out, "add-ons: available (Available kube-system/coredns 2/2 available)") {
		t.Errorf("health of available add-ons:\n%s", out)
	}
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady})
	if out := a.must("kubernetes", "health", "lab"); !strings.Contains(out, "add-ons: not checked yet") {
		t.Errorf("health before any add-on check:\n%s", out)
	}
}

// health does not call a cluster ready when no health pass has refreshed
// its status for longer than the staleness bound: it says so, exits 1, and
// -o json carries how long; a status checked just now is ready.
func TestHealthRefusesStaleReady(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("lab.yaml", labManifest(t)), "--yes")
	old := time.Now().Add(-5 * time.Minute).UTC().Format(time.RFC3339)
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, LastHealthCheck: old, HealthInterval: "10s"})
	out, _, err := a.runIn(strings.NewReader(""), "kubernetes", "health", "lab")
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("health of a ready status checked 5 minutes ago: err %v, want exit 1 saying stale\n%s", err, out)
	}
	if !strings.Contains(out, "stale: no health check for 5m") || !strings.Contains(out, "check every 10s") {
		t.Errorf("health output does not say the status is stale:\n%s", out)
	}
	js, _, _ := a.runIn(strings.NewReader(""), "kubernetes", "health", "lab", "-o", "json")
	var rep struct {
		StaleFor       string `json:"staleFor"`
		HealthInterval string `json:"healthInterval"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || !strings.HasPrefix(rep.StaleFor, "5m") || rep.HealthInterval != "10s" {
		t.Errorf("-o json staleFor %q healthInterval %q (err %v), want 5m… and 10s", rep.StaleFor, rep.HealthInterval, err)
	}

	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, LastHealthCheck: time.Now().UTC().Format(time.RFC3339), HealthInterval: "10s"})
	if out := a.must("kubernetes", "health", "lab"); strings.Contains(out, "stale") {
		t.Errorf("health of a status checked just now says stale:\n%s", out)
	}
}
