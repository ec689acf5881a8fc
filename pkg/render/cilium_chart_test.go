package render

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/tests/cilium"
	"kcore.dev/kcore/tests/kcache"
)

// The real Helm and Cilium chart: these tests run the helm the Makefile
// builds over the chart of the Cilium release the lab builds
// (scripts/build-helm.sh, scripts/build-cilium.sh), so the values the
// renderer sets are checked against what the chart does with them, not
// against a list kept beside it.

// helmChart runs the cached helm with args over the cached Cilium chart,
// with its homes in a temporary directory, bounded to a minute.
type helmChart struct {
	helm, chart string
	env         []string
}

func newHelmChart(t *testing.T) *helmChart {
	t.Helper()
	home := t.TempDir()
	return &helmChart{
		helm:  kcache.Tool(t, "KCORE_HELM", "helm", "KCORE_HELM_REQUIRED", "make helm"),
		chart: kcache.Tool(t, "KCORE_CILIUM_CHART", "cilium-chart", "KCORE_HELM_REQUIRED", "make cilium-bins"),
		env: append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
			"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data")),
	}
}

func (h *helmChart) run(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.helm, args...)
	cmd.Env = h.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// template renders the chart with the --set values given, without the
// Secrets (the chart generates fresh TLS keys for them on every run), so
// that two renders of the same values are equal.
func (h *helmChart) template(t *testing.T, sets []string) string {
	t.Helper()
	args := []string{"template", CiliumRelease, h.chart, "--namespace", CiliumNamespace}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	var keep []string
	for _, doc := range strings.Split(string(h.run(t, args...)), "\n---\n") {
		if !strings.Contains(doc, "\nkind: Secret\n") {
			keep = append(keep, doc)
		}
	}
	return strings.Join(keep, "\n---\n")
}

// setIndex is a list index at the end of a --set path's part: devices[0].
var setIndex = regexp.MustCompile(`\[\d+\]$`)

// chartDefault looks key (a --set path: dots, [i] indexes) up in the
// chart's values.yaml; found is false when the chart has no such value.
func chartDefault(values map[string]any, key string) (v any, found bool) {
	var cur any = values
	for _, part := range strings.Split(key, ".") {
		part = setIndex.ReplaceAllString(part, "")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// TestCiliumSettingsAreChartValues: every value the Cilium unit sets is one
// the chart has, in values.yaml or read by its templates (a misspelt or
// wrongly cased key, like the reference's mtu for the chart's MTU, would be
// silently ignored), and each one changes
// what the chart renders, unless it restates the chart's own default (as
// in values.yaml, or as the configuration it renders: routingMode=tunnel
// where the chart's empty default renders routing-mode "tunnel"). It
// runs for the lab cluster and for the variants that set other values.
func TestCiliumSettingsAreChartValues(t *testing.T) {
	h := newHelmChart(t)
	var values map[string]any
	if err := yaml.Unmarshal(h.run(t, "show", "values", h.chart), &values); err != nil {
		t.Fatal(err)
	}
	if _, found := chartDefault(values, "mtu"); found {
		t.Error("the chart has a value mtu: the check below would not have caught the reference's")
	}
	variants := map[string]struct {
		edit func(*api.ClusterSpec)
		opts Options
	}{
		"lab":            {edit: func(*api.ClusterSpec) {}},
		"tunnel geneve":  {edit: func(s *api.ClusterSpec) { s.Cilium.Mode = "tunnel"; s.Cilium.Tunnel = "geneve" }},
		"two interfaces": {edit: func(s *api.ClusterSpec) { s.WorkerNodes[0].Iface = "eno1" }},
		"one node":       {edit: func(s *api.ClusterSpec) { s.ControlPlaneNodes = s.ControlPlaneNodes[:1]; s.WorkerNodes = nil }},
		"lab profile":    {edit: func(*api.ClusterSpec) {}, opts: Options{Profile: ProfileLab}},
	}
	for name, v := range variants {
		t.Run(name, func(t *testing.T) {
			c := loadCluster(t, "lab")
			v.edit(&c.Spec)
			states, err := Render(c, fakeSecrets(c), testFacts(), v.opts)
			if err != nil {
				t.Fatal(err)
			}
			u := unitByName(states["node-105"], UnitCilium)
			if u == nil || !slices.Equal(u.Argv[:6], []string{"helm", "upgrade", "--install", CiliumRelease, CiliumChartDir, "--namespace"}) {
				t.Fatalf("the cilium unit is not a helm upgrade --install of the chart: %v", u)
			}
			sets := setValues(u.Argv)
			all := h.template(t, sets)
			for i, s := range sets {
				key, val, _ := strings.Cut(s, "=")
				def, found := chartDefault(values, key)
				without := h.template(t, slices.Delete(slices.Clone(sets), i, i+1))
				if !found {
					// A value values.yaml only documents in a comment
					// (socketLB.hostNamespaceOnly) counts when the
					// templates read it.
					if without == all {
						t.Errorf("%s: the chart has no value %s; helm would ignore it", s, key)
					}
					continue
				}
				restated := strings.EqualFold(strings.TrimSpace(yamlScalar(def)), val) ||
					strings.Contains(all, ": "+strconv.Quote(val)+"\n")
				if without == all && !restated {
					t.Errorf("%s changes nothing the chart renders (its default is %v)", s, def)
				}
			}
		})
	}
}

// yamlScalar is how a default from values.yaml reads as a --set value.
func yamlScalar(v any) string {
	out, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return string(out)
}

// TestCiliumWorkloadsAreTheChart: the DaemonSet and Deployment health checks
// read back (CiliumWorkloads) are the ones the chart creates, with the same
// selectors, and a one-node cluster gets one operator (the chart's two
// would not fit: they must run on different nodes).
func TestCiliumWorkloadsAreTheChart(t *testing.T) {
	h := newHelmChart(t)
	for _, tc := range []struct {
		name      string
		edit      func(*api.ClusterSpec)
		operators int
	}{
		{"lab", func(*api.ClusterSpec) {}, 2},
		{"one node", func(s *api.ClusterSpec) { s.ControlPlaneNodes = s.ControlPlaneNodes[:1]; s.WorkerNodes = nil }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := loadCluster(t, "lab")
			tc.edit(&c.Spec)
			states, err := Render(c, fakeSecrets(c), testFacts(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := CiliumWorkloads()
			if len(want) != 2 {
				t.Fatalf("CiliumWorkloads = %+v, want the agents and the operator", want)
			}
			var bootstrap *api.Unit
			for _, ns := range states {
				if u := unitByName(ns, UnitCilium); u != nil {
					bootstrap = u
				}
			}
			got, err := manifests.Workloads(h.template(t, setValues(bootstrap.Argv)))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range want {
				i := slices.IndexFunc(got, func(g manifests.Workload) bool {
					return g.Kind == w.Kind && g.Namespace == w.Namespace && g.Name == w.Name
				})
				if i < 0 {
					t.Errorf("the chart creates no %s %s; it creates %+v", w.Kind, w, got)
					continue
				}
				if !maps.Equal(got[i].MatchLabels, w.MatchLabels) {
					t.Errorf("%s %s selects %v in the chart, %v in CiliumWorkloads", w.Kind, w, got[i].MatchLabels, w.MatchLabels)
				}
				if w.Name == CiliumOperatorDeployment && got[i].Replicas != tc.operators {
					t.Errorf("%d operators, want %d", got[i].Replicas, tc.operators)
				}
			}
		})
	}
}

// chartImage is an image a rendered manifest names.
var chartImage = regexp.MustCompile(`(?m)^\s*image:\s*"?([^"\s]+)"?\s*$`)

// TestCiliumImagesAreTheLabs: the chart, with the values a lab node sets,
// runs exactly the images the lab builds (tests/cilium pins them, and
// scripts/build-images.sh --set cilium makes them), so no pod of it waits
// for an image the lab's registry does not hold; with production's values
// it runs them and Envoy's.
func TestCiliumImagesAreTheLabs(t *testing.T) {
	h := newHelmChart(t)
	for _, tc := range []struct {
		name string
		opts Options
		want []string
	}{
		{"lab profile", Options{Profile: ProfileLab}, []string{cilium.AgentImage, cilium.OperatorGenericImage}},
		{"default", Options{}, []string{cilium.AgentImage, cilium.OperatorGenericImage, "envoy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := loadCluster(t, "lab")
			states, err := Render(c, fakeSecrets(c), testFacts(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			u := unitByName(states["node-105"], UnitCilium)
			if u == nil {
				t.Fatal("no cilium unit on the bootstrap node")
			}
			seen := map[string]bool{}
			for _, m := range chartImage.FindAllStringSubmatch(h.template(t, setValues(u.Argv)), -1) {
				ref := m[1]
				if strings.Contains(ref, "cilium-envoy") {
					ref = "envoy"
				}
				seen[ref] = true
			}
			got := slices.Sorted(maps.Keys(seen))
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("the chart runs %v, want %v", got, want)
			}
		})
	}
}
