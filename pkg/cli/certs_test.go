package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/orchestrator"
)

// kctl kubernetes certs lists the certificates the cluster's status holds
// with the time remaining; health shows the Certificates warning.
func TestKubernetesCertsListsStoredCertificates(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("lab.yaml", labManifest(t)), "--yes")
	future := time.Now().Add(200 * 24 * time.Hour).UTC().Format(time.RFC3339)
	a.setStatus("lab", api.ClusterStatus{
		Phase: api.PhaseReady,
		Certificates: []api.CertificateStatus{
			{Name: "ca", Subject: "CN=kubernetes", Issuer: "CN=kubernetes", NotAfter: future},
			{Name: "controlPlanes/node-105/apiServer", Subject: "CN=kube-apiserver", Issuer: "CN=kubernetes", NotAfter: "2020-01-01T00:00:00Z"},
		},
		Conditions: []api.Condition{{Type: orchestrator.CondCertificates, Status: "False", Reason: "ExpiringSoon",
			Message: "1 certificates expire soon or have expired: controlPlanes/node-105/apiServer (2020-01-01T00:00:00Z)"}},
	})
	out := a.must("kubernetes", "certs", "lab")
	for _, want := range []string{"NAME", "REMAINING", "controlPlanes/node-105/apiServer", "CN=kube-apiserver", "expired", "199d"} {
		if !strings.Contains(out, want) {
			t.Errorf("certs table lacks %q:\n%s", want, out)
		}
	}
	var rows []certRow
	if err := json.Unmarshal([]byte(a.must("kubernetes", "certs", "lab", "-o", "json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Expired || !rows[1].Expired || rows[1].NotAfter != "2020-01-01T00:00:00Z" {
		t.Fatalf("-o json rows = %+v", rows)
	}
	health, _, _ := a.run("kubernetes", "health", "lab")
	if !strings.Contains(health, "ExpiringSoon") || !strings.Contains(health, "controlPlanes/node-105/apiServer") {
		t.Errorf("health does not warn about the expiring certificate:\n%s", health)
	}
}

// kctl controller certs reads the certificate each replica presents.
func TestControllerCertsReadsPresentedCertificates(t *testing.T) {
	a := newApplyEnv(t)
	out := a.must("controller", "certs")
	for _, want := range []string{"ca", "replica ", "context ", "REMAINING"} {
		if !strings.Contains(out, want) {
			t.Errorf("controller certs lacks %q:\n%s", want, out)
		}
	}
	var rows []certRow
	if err := json.Unmarshal([]byte(a.must("controller", "certs", "-o", "json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 3 {
		t.Fatalf("rows = %+v: want the CA, a replica and the context", rows)
	}
	for _, r := range rows {
		if r.Expired || r.NotAfter == "" || r.Subject == "" {
			t.Errorf("row %+v", r)
		}
	}
}
