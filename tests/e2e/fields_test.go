package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// Bounds of the field scenarios.
const (
	// fieldApplyTimeout bounds one apply --wait of a field change.
	fieldApplyTimeout = 5 * time.Minute
	// fieldReadyTimeout bounds the wait for ready after an apply.
	fieldReadyTimeout = 2 * time.Minute
	// fieldFactsTimeout bounds the wait for a plan the nodes' facts do not
	// block: two of the agents' 30 s fact intervals.
	fieldFactsTimeout = time.Minute
)

// planDoc is the part of kctl's JSON plan the scenarios read.
type planDoc struct {
	Clusters []struct {
		Name   string     `json:"name"`
		Action string     `json:"action"`
		Steps  []planStep `json:"steps"`
	} `json:"clusters"`
	Blocking []planIssue `json:"blocking"`
}

// planStep is one step of a plan.
type planStep struct {
	Node       string     `json:"node"`
	Component  string     `json:"component"`
	Action     string     `json:"action"`
	Disruption string     `json:"disruption"`
	Detail     string     `json:"detail"`
	Changes    []planItem `json:"changes"`
}

// planItem is one rendered item a step changes.
type planItem struct {
	Kind    string   `json:"kind"`
	Name    string   `json:"name"`
	Change  string   `json:"change"`
	Objects []string `json:"objects"`
}

// planIssue is a blocking issue or a warning.
type planIssue struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Node    string `json:"node"`
	Message string `json:"message"`
}

// step finds the step of component on node, or nil.
func (p planDoc) step(node, component string) *planStep {
	for _, c := range p.Clusters {
		for i, s := range c.Steps {
			if s.Node == node && s.Component == component {
				return &c.Steps[i]
			}
		}
	}
	return nil
}

// has reports whether the step changes an item of kind named name.
func (s *planStep) has(kind, name string) bool {
	return s != nil && slices.ContainsFunc(s.Changes, func(it planItem) bool { return it.Kind == kind && it.Name == name })
}

// agentRecord is one cluster's entry in a node agent's state file: what it
// wrote (file hashes), the input hash of each unit it runs, the input hash
// of each task's last successful run.
type agentRecord struct {
	Files map[string]struct {
		SHA256 string `json:"sha256"`
		Mode   uint32 `json:"mode"`
	} `json:"files"`
	Units map[string]string `json:"units"`
	Tasks map[string]string `json:"tasks"`
}

// agentRecords reads every lab node's agent state for the cluster, by
// namespace suffix (n1 …); file paths are made relative to the node's root,
// as the plan names them.
func (l *lab) agentRecords(t *testing.T) map[string]map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(l.dir, "n*", "var", "lib", "kcore", "agent-state.json"))
	out := map[string]map[string]string{}
	for _, f := range files {
		name := filepath.Base(strings.TrimSuffix(f, "/var/lib/kcore/agent-state.json"))
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Clusters map[string]*agentRecord `json:"clusters"`
		}
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatalf("decode %s: %v", f, err)
		}
		items := map[string]string{}
		if rec := st.Clusters[cluster]; rec != nil {
			root := filepath.Join(l.dir, name)
			for p, r := range rec.Files {
				items["file "+strings.TrimPrefix(p, root)] = fmt.Sprintf("%s %o", r.SHA256, r.Mode)
			}
			for u, h := range rec.Units {
				items["unit "+u] = h
			}
			for k, h := range rec.Tasks {
				items["task "+k] = h
			}
		}
		out[name] = items
	}
	return out
}

// changedItems are the items whose record differs between two readings,
// per node.
func changedItems(before, after map[string]map[string]string) map[string][]string {
	out := map[string][]string{}
	for n, a := range after {
		b := before[n]
		for k, v := range a {
			if b[k] != v {
				out[n] = append(out[n], k)
			}
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				out[n] = append(out[n], k)
			}
		}
		sort.Strings(out[n])
	}
	return out
}

// plannedItems are the items the plan says change, per namespace suffix:
// files added, changed or removed, units started, restarted or stopped,
// tasks run or removed (an update of a field no hash covers is left out:
// nothing changes on the node).
func plannedItems(p planDoc) map[string][]string {
	out := map[string][]string{}
	for _, c := range p.Clusters {
		for _, s := range c.Steps {
			n := strings.TrimPrefix(s.Node, cluster+"-")
			for _, it := range s.Changes {
				if it.Kind == "volume" || it.Change == "update" {
					continue
				}
				if k := it.Kind + " " + it.Name; !slices.Contains(out[n], k) {
					out[n] = append(out[n], k)
				}
			}
		}
	}
	for n := range out {
		sort.Strings(out[n])
	}
	return out
}

// planFor writes src as a manifest and asks kctl for its plan, as JSON
// (saved to a file kctl kubernetes apply takes) and as text. err is kctl's
// exit error: a blocked plan exits non-zero and is still returned.
func (l *lab) planFor(t *testing.T, src string) (planDoc, string, string, error) {
	t.Helper()
	dir := t.TempDir()
	f, saved := filepath.Join(dir, "cluster.yaml"), filepath.Join(dir, "plan.json")
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := l.kctl(time.Minute, "kubernetes", "plan", "-f", f, "--out", saved)
	var p planDoc
	data, rerr := os.ReadFile(saved)
	if rerr != nil {
		js, jerr := l.kctl(time.Minute, "kubernetes", "plan", "-f", f, "-o", "json")
		if jerr != nil && js == "" {
			t.Fatalf("kctl kubernetes plan: %v / %v\n%s", err, jerr, text)
		}
		data = []byte(js)
	}
	if jerr := json.Unmarshal(data, &p); jerr != nil {
		t.Fatalf("decode the plan: %v\n%s", jerr, data)
	}
	return p, text, saved, err
}

// applyField plans src, applies exactly that plan with --wait, waits for
// the cluster to be ready and checks that what changed on the nodes (the
// agents' records of files, units and tasks) is what the plan named, and
// that every unit the plan restarts was started again by its agent. It
// returns the plan and when the apply started.
func (l *lab) applyField(t *testing.T, src string) (planDoc, time.Time) {
	t.Helper()
	eventually(t, "cluster ready before the change", fieldReadyTimeout, l.healthy)
	// The plan checks addresses against the nodes' facts, which the agents
	// measure every 30 s: right after a VIP moved, a node may still be
	// reported holding it. And a plan computed while the previous change's
	// status is still being written is refused as stale: plan again.
	var p planDoc
	var before map[string]map[string]string
	var start time.Time
	eventually(t, "a plan without blocking issues, applied", fieldFactsTimeout+fieldApplyTimeout, func() error {
		pp, text, saved, err := l.planFor(t, src)
		if err != nil || len(pp.Blocking) > 0 {
			return fmt.Errorf("plan: %v, blocking %+v\n%s", err, pp.Blocking, text)
		}
		p = pp
		before = l.agentRecords(t)
		start = time.Now()
		out, err := l.kctl(fieldApplyTimeout+time.Minute, "kubernetes", "apply", saved, "--yes", "--wait", "--timeout", fieldApplyTimeout.String())
		if err != nil && strings.Contains(out+err.Error(), "changed since this plan was computed") {
			return fmt.Errorf("stale plan: %w", err)
		}
		if err != nil {
			t.Fatalf("kctl kubernetes apply %s: %v\n%s\n%s", saved, err, out, l.healthOutput())
		}
		t.Logf("plan:\n%s", text)
		return nil
	})
	eventually(t, "cluster ready after the change", fieldReadyTimeout, l.healthy)
	eventually(t, "/readyz through the API endpoint", 30*time.Second, l.readyz)
	t.Logf("applied and ready in %s", time.Since(start).Round(100*time.Millisecond))

	planned, changed := plannedItems(p), changedItems(before, l.agentRecords(t))
	nodes := append(mapKeys(planned), mapKeys(changed)...)
	slices.Sort(nodes)
	for _, n := range slices.Compact(nodes) {
		for _, k := range changed[n] {
			if !slices.Contains(planned[n], k) {
				t.Errorf("%s: %s changed on the node, but the plan does not name it", n, k)
			}
		}
		for _, k := range planned[n] {
			if !slices.Contains(changed[n], k) {
				t.Errorf("%s: the plan names %s, but the node's agent did not change it", n, k)
			}
		}
	}
	for _, c := range p.Clusters {
		for _, s := range c.Steps {
			for _, it := range s.Changes {
				if it.Kind == "unit" && (it.Change == "restart" || it.Change == "start") {
					n := strings.TrimPrefix(s.Node, cluster+"-")
					if len(l.unitStarts(t, n, it.Name, start)) == 0 {
						t.Errorf("%s: the plan restarts %s, but its agent's log shows no start since the apply", n, it.Name)
					}
				}
			}
		}
	}
	return p, start
}

func mapKeys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// labManifest is examples/lab/cluster.yaml, the cluster the lab runs.
func (l *lab) labManifest(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(l.manifestFile())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// edit replaces old with new in src, which must hold old.
func edit(t *testing.T, src, old, new string) string {
	t.Helper()
	if !strings.Contains(src, old) {
		t.Fatalf("the lab manifest has no %q", old)
	}
	return strings.ReplaceAll(src, old, new)
}

// timed runs a scenario as a subtest and logs the seconds it took.
func timed(t *testing.T, name string, f func(*testing.T)) bool {
	start := time.Now()
	ok := t.Run(name, f)
	t.Logf("scenario %s: %s", name, time.Since(start).Round(100*time.Millisecond))
	return ok
}
