package plan

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func nodeStateFixture() *api.NodeState {
	return &api.NodeState{
		Cluster: "lab", NodeID: "node-105",
		Files: []api.File{
			{Path: "/etc/kubernetes/pki/apiserver.crt", Mode: 0o644, Content: "sans a"},
			{Path: "/etc/kubernetes/admin.conf", Mode: 0o600, Content: "admin", Secret: true},
		},
		Units: []api.Unit{
			{Name: "kcore-kube-apiserver", Argv: []string{"kube-apiserver"}, InputHash: "h1", Inputs: []string{"/etc/kubernetes/pki/apiserver.crt"}},
			{Name: "kcore-etcd", Argv: []string{"etcd"}, InputHash: "e1"},
		},
		Tasks:   []api.Task{{Name: "kcore-kubernetes-addons", InputHash: "t1", Inputs: []string{"/etc/kubernetes/admin.conf"}}},
		Volumes: []api.VolumeOp{{Name: "k8s-lab-node-105-data", SizeBytes: 10, MountPath: "/mnt/a"}},
	}
}

func TestNodeDiffSameStateIsEmpty(t *testing.T) {
	a, b := nodeStateFixture(), nodeStateFixture()
	b.Files[0].Reason = "reasons are not content"
	if got := NodeDiff(a, b); !got.Empty() {
		t.Fatalf("NodeDiff of equal states = %+v, want empty", got)
	}
}

func TestNodeDiffClassifiesEveryItem(t *testing.T) {
	old, cur := nodeStateFixture(), nodeStateFixture()
	cur.Files[0].Content = "sans b"
	cur.Files = append(cur.Files[:1], api.File{Path: "/etc/keepalived/keepalived.conf", Content: "k"})
	cur.Units[0].InputHash = "h2"
	cur.Units[1].After = []string{"x"}
	cur.Units = append(cur.Units, api.Unit{Name: "kcore-keepalived", InputHash: "k1"})
	cur.Tasks = nil
	cur.Volumes[0].SizeBytes = 20
	got := NodeDiff(old, cur)
	want := map[string]string{
		"k8s-lab-node-105-data":             ChangeGrow,
		"/etc/kubernetes/pki/apiserver.crt": ChangeChange,
		"/etc/kubernetes/admin.conf":        ChangeRemove,
		"/etc/keepalived/keepalived.conf":   ChangeAdd,
		"kcore-kube-apiserver":              ChangeRestart,
		"kcore-etcd":                        ChangeUpdate,
		"kcore-keepalived":                  ChangeStart,
		"kcore-kubernetes-addons":           ChangeRemove,
	}
	if len(got.Items) != len(want) {
		t.Fatalf("NodeDiff items = %+v, want %d items", got.Items, len(want))
	}
	for _, it := range got.Items {
		if want[it.Name] != it.Change {
			t.Errorf("%s %s: change %q, want %q", it.Kind, it.Name, it.Change, want[it.Name])
		}
		if it.Name == "kcore-kube-apiserver" && !slices.Equal(it.Because, []string{"/etc/kubernetes/pki/apiserver.crt"}) {
			t.Errorf("apiserver restart because %v, want its certificate", it.Because)
		}
	}
	if r := got.Restarts(); !slices.Equal(r, []string{"kcore-keepalived", "kcore-kube-apiserver"}) {
		t.Errorf("Restarts() = %v", r)
	}
	if !got.Restarted("kcore-kube-apiserver") || got.Restarted("kcore-keepalived") {
		t.Errorf("Restarted: apiserver restarts, keepalived only starts")
	}
}

func TestNodeDiffMembership(t *testing.T) {
	s := nodeStateFixture()
	join := NodeDiff(nil, s)
	if join.Membership != MembershipJoin || join.Node != "node-105" || len(join.Items) != 6 {
		t.Fatalf("join = %+v", join)
	}
	leave := NodeDiff(s, nil)
	if leave.Membership != MembershipLeave {
		t.Fatalf("leave = %+v", leave)
	}
	for _, it := range leave.Items {
		if it.Kind == KindVolume && it.Change != ChangeKeep {
			t.Errorf("a leaving node's volume is %s, want keep", it.Change)
		}
	}
	if !NodeDiff(nil, nil).Empty() {
		t.Error("NodeDiff(nil, nil) is not empty")
	}
}

// A changed manifest names the Kubernetes objects that change in it.
func TestNodeDiffNamesChangedObjects(t *testing.T) {
	svc := func(ip string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\n  namespace: kube-system\ndata: {a: b}\n---\n" +
			"apiVersion: v1\nkind: Service\nmetadata:\n  name: kube-dns\n  namespace: kube-system\nspec:\n  clusterIP: " + ip + "\n"
	}
	old := &api.NodeState{NodeID: "n", Files: []api.File{{Path: "/etc/kubernetes/addons/x.yaml", Content: svc("10.96.0.10")}}}
	cur := &api.NodeState{NodeID: "n", Files: []api.File{{Path: "/etc/kubernetes/addons/x.yaml", Content: svc("10.96.0.53")}}}
	got := NodeDiff(old, cur)
	if len(got.Items) != 1 || !slices.Equal(got.Items[0].Objects, []string{"changed Service kube-system/kube-dns"}) {
		t.Fatalf("items = %+v, want the Service named", got.Items)
	}
}

// objectChanges reads at most MaxManifestObjects objects of a manifest.
func TestObjectChangesBound(t *testing.T) {
	doc := func(i int) string {
		return "kind: ConfigMap\nmetadata:\n  name: c" + strconv.Itoa(i) + "\n---\n"
	}
	var atBound, over strings.Builder
	for i := range MaxManifestObjects {
		atBound.WriteString(doc(i))
	}
	over.WriteString(atBound.String() + doc(MaxManifestObjects))
	if got := objectChanges("/m.yaml", "", atBound.String()); len(got) != MaxManifestObjects {
		t.Errorf("at the bound: %d objects, want %d", len(got), MaxManifestObjects)
	}
	if got := objectChanges("/m.yaml", "", over.String()); got != nil {
		t.Errorf("over the bound: %d objects, want none", len(got))
	}
}

// TestServiceIP reads a Service manifest's cluster IP, and nothing from
// anything else: the plan calls the kube-dns Service replaced only when the
// IP in its rendered file changes.
func TestServiceIP(t *testing.T) {
	for in, want := range map[string]string{
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: kube-dns\nspec:\n  clusterIP: 10.96.0.10\n": "10.96.0.10",
		"# comment\nkind: Service\nspec:\n  clusterIP: \"10.96.0.53\"\n":                               "10.96.0.53",
		"kind: Deployment\nspec:\n  clusterIP: 10.96.0.10\n":                                           "",
		"kind: Service\nspec: {}\n": "",
		"kind: [":                   "",
		"":                          "",
	} {
		if got := serviceIP(in); got != want {
			t.Errorf("serviceIP(%q) = %q, want %q", in, got, want)
		}
	}
}
