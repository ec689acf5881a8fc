package harness

import (
	"context"
	"encoding/json"
	"testing"

	"kcore.dev/kcore/pkg/store"
)

func TestClusterStartsAndReplicates(t *testing.T) {
	c := New(t, Options{Replicas: 3})
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	cmd, err := store.Put{Kind: "Node", Name: "a", Data: json.RawMessage(`{"x":1}`)}.Command()
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Apply(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	c.WaitCaughtUp()
	for _, r := range c.Running() {
		o, ok := r.Node().State().Get("Node", "a")
		if !ok || o.ModifyIndex != res.Index || o.CreateTime == "" {
			t.Fatalf("%s: got %+v, %v", r.ID, o, ok)
		}
	}
	members, err := c.Leader().Node().Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 3 {
		t.Fatalf("members = %+v", members)
	}
}
