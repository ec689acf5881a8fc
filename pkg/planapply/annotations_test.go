package planapply

import (
	"encoding/json"
	"maps"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/store"
)

// Annotations are the controller's (a GitSource's ownership): an update
// keeps the stored ones, and a request cannot set them on a create or
// change them on an update.
func TestCommitKeepsStoredAnnotations(t *testing.T) {
	owned := map[string]string{api.AnnotationGitSource: "fleet", api.AnnotationGitCommit: "3c4ad1babf818a53fb39bb30b702dc0f8887a564"}
	lab := ready("lab", "10.97.0.10")
	lab.Metadata.Annotations = owned
	u1 := update("u1", "0.5.0")
	u1.Default()
	u1.Metadata.Annotations = owned
	v := objects{index: 20, nodes: []store.Object{
		object(t, api.KindNode, "node-201", node("node-201", "192.168.41.201"), 5),
		object(t, api.KindNode, "node-202", node("node-202", "192.168.41.202"), 6),
	},
		clusters: []store.Object{object(t, api.KindKubernetesCluster, "lab", lab, 10)},
		updates:  []store.Object{object(t, api.KindClusterUpdate, "u1", u1, 11)},
	}.view(t)
	forged := map[string]string{api.AnnotationGitSource: "other"}
	changed := edge("lab", "10.97.0.53")
	changed.Metadata.Annotations = forged
	created := edgeOn("new", "node-202", "192.168.41.202", "10.97.0.10")
	created.Spec.ClusterCIDR = "10.246.0.0/16"
	created.Metadata.Annotations = forged
	next := update("u1", "0.5.1")
	next.Metadata.Annotations = forged
	req := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{changed}, Updates: []api.ClusterUpdate{next}}
	ops, _, err := Commit(v, reviewed(t, v, req), render.Options{}, commitTime())
	if err != nil {
		t.Fatal(err)
	}
	req2 := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{created}}
	ops2, _, err := Commit(v, reviewed(t, v, req2), render.Options{}, commitTime())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{"lab": owned, "u1": owned, "new": nil}
	for _, op := range append(ops, ops2...) {
		var o struct {
			Metadata api.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(op.Put.Data, &o); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(o.Metadata.Annotations, want[op.Put.Name]) {
			t.Errorf("%s/%s annotations %v, want %v", op.Put.Kind, op.Put.Name, o.Metadata.Annotations, want[op.Put.Name])
		}
	}
	if len(ops)+len(ops2) != 3 {
		t.Fatalf("%d ops, want 3", len(ops)+len(ops2))
	}
}
