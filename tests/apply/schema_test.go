package apply

import (
	"context"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/version"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// TestSchemaGatesCheckTheReplicas: every replica records the schema it
// reads and writes in its Member object; a ClusterUpdate whose
// min_compatible_reader (and so previous_schema_version) is above one
// replica's schema is blocked naming that replica, the others pass, and
// `controller members` shows each replica's schema.
func TestSchemaGatesCheckTheReplicas(t *testing.T) {
	e := newEnv(t)
	leader := e.c.WaitLeader()
	var old *harness.Replica
	for _, r := range e.c.Running() {
		if r != leader {
			old = r
			break
		}
	}
	// The old replica is one built before the current schema: it recorded
	// the schema below this build's when it joined.
	if _, err := apiserve.Of(leader).Server.RecordMember(context.Background(), old.ID, old.Addr, apiserve.Of(old).Addr, version.Schema-1); err != nil {
		t.Fatal(err)
	}
	e.c.WaitCaughtUp()
	c := e.client(apiv1.RoleClusterAdmin, e.follower())
	e.putNode(c, "node-201", "192.168.41.201")
	u := api.ClusterUpdate{
		Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: "next-schema"},
		Spec: api.UpdateSpec{Version: "0.6.0", AllNodes: true, UpdateKind: api.UpdateKindK8s,
			SchemaVersion: version.Schema + 1, PreviousSchemaVersion: version.Schema, MinCompatibleReader: version.Schema,
			TestedOSPins: api.OSPins{KubernetesVersion: "1.37.2"}},
	}
	resp, err := c.Plan(t.Context(), apiv1.PlanRequest{Updates: []api.ClusterUpdate{u}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Updates) != 1 || resp.Updates[0].Rollout == nil {
		t.Fatalf("plan updates = %+v", resp.Updates)
	}
	var gates []string
	for _, is := range resp.Updates[0].Rollout.Blocking {
		if is.Code == rollout.CodeSchemaGate {
			gates = append(gates, is.Path)
			if !strings.Contains(is.Message, old.ID) {
				t.Errorf("schema gate does not name the old replica %s: %s", old.ID, is.Message)
			}
		}
	}
	if !slices.Equal(gates, []string{"spec.previousSchemaVersion", "spec.minCompatibleReader"}) {
		t.Fatalf("schema gates = %v, want the previous schema and the min reader; blocking %+v", gates, resp.Updates[0].Rollout.Blocking)
	}

	members, err := c.Members(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		want := version.Schema
		if m.ID == old.ID {
			want = version.Schema - 1
		}
		if m.RecordedSchema != want {
			t.Errorf("member %s recorded schema %d, want %d", m.ID, m.RecordedSchema, want)
		}
	}
}
