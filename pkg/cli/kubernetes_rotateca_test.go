package cli

import (
	"errors"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/client"
)

// TestRotateCA: rotate-ca plans the stored manifest with spec.caGeneration
// raised by one, shows the three rolls and what stops working, and stores
// the raised generation once confirmed. Only an admin may: a viewer and an
// operator are refused before any plan is printed.
func TestRotateCA(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("lab.yaml", labManifest(t)), "--yes")
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady})
	for _, role := range []string{"viewer", "operator"} {
		a.must("cert", "issue", "--role", role, "--name", role+"-user")
	}

	for _, role := range []string{"viewer", "operator"} {
		before := a.index()
		out, _, err := a.runIn(strings.NewReader("y\n"), "--context", role+"-user@lab", "kubernetes", "rotate-ca", "lab", "--yes")
		if !errors.Is(err, client.ErrForbidden) || strings.Contains(out, "Plan:") {
			t.Fatalf("%s rotate-ca = %v, want ErrForbidden before any plan:\n%s", role, err, out)
		}
		if a.index() != before {
			t.Errorf("%s's refused rotate-ca moved the index %d → %d", role, before, a.index())
		}
	}

	out, _, err := a.runIn(strings.NewReader(""), "kubernetes", "rotate-ca", "lab")
	if !errors.Is(err, ErrNoConfirmation) {
		t.Fatalf("rotate-ca without a terminal or --yes = %v:\n%s", err, out)
	}
	if kc, _ := a.cluster("lab"); kc.Spec.CAGeneration != 0 {
		t.Fatalf("an unconfirmed rotate-ca stored generation %d", kc.Spec.CAGeneration)
	}

	out = a.must("kubernetes", "rotate-ca", "lab", "--yes")
	for _, want := range []string{
		"ca-rotation", "kctl kubernetes kubeconfig lab",
		`+ spec.caGeneration: "1"`,
		"CA rotation 0 → 1, trust phase",
		"cluster CA certificate of generations 0 and 1",
		"CA rotation 0 → 1, reissue phase",
		"CA rotation 0 → 1 ends",
	} {
		i := strings.Index(out, want)
		if i < 0 {
			t.Fatalf("rotate-ca output lacks %q in order:\n%s", want, out)
		}
		out = out[i:]
	}
	if kc, _ := a.cluster("lab"); kc.Spec.CAGeneration != 1 {
		t.Fatalf("rotate-ca stored generation %d, want 1", kc.Spec.CAGeneration)
	}
	// Asked again between two phases of the first rotation: the next
	// generation, queued behind the running rotation.
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, CAGeneration: 1,
		CARotation: &api.CARotation{From: 0, To: 1, Phase: api.CARotationReissue}})
	out = a.must("kubernetes", "rotate-ca", "lab", "--yes")
	for _, want := range []string{`~ spec.caGeneration: "1" → "2"`, "the rotation to CA generation 1 is in its reissue phase: the rotation to generation 2 starts once it ends"} {
		if !strings.Contains(out, want) {
			t.Errorf("rotate-ca during a rotation lacks %q:\n%s", want, out)
		}
	}
}
