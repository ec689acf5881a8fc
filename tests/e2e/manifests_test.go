package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/pkg/render"
)

// checkKubectlManifests applies every add-on manifest the agent rendered
// under root (render's KubectlManifests: what the kubectl tasks apply
// without kubectl's schema check) again as a server-side dry run with
// --validate=strict, through kubectl of that cluster, as the tasks' own
// field manager: the API server refuses an unknown or duplicate field, so
// a template that the tasks' --validate=false would let through fails
// here. want is how many of the
// files the node must hold.
func checkKubectlManifests(t *testing.T, kubectl func(...string) (string, error), root string, want int) {
	t.Helper()
	found := 0
	for _, p := range render.PrimaryLayout().KubectlManifests() {
		f := filepath.Join(root, p)
		if _, err := os.Stat(f); os.IsNotExist(err) {
			continue
		}
		found++
		if out, err := kubectl("apply", "--server-side", "--force-conflicts", "--dry-run=server", "--validate=strict", "--field-manager="+render.FieldManager, "-f", f); err != nil {
			t.Errorf("%s fails the API server's strict field validation: %v\n%s", p, err, out)
		}
	}
	if found != want {
		t.Errorf("%d of the kubectl tasks' manifests under %s, want %d", found, root, want)
	}
}
