package plan

import (
	"slices"
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
