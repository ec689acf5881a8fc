package replication

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// item is the payload of the objects the tests write.
type item struct {
	ID     string `json:"id"`
	Writer int    `json:"writer"`
}

const itemKind = "Item"

func putItem(t *testing.T, id string, writer int, expect *uint64) store.Command {
	t.Helper()
	data, err := json.Marshal(item{ID: id, Writer: writer})
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := store.Put{Kind: itemKind, Name: id, Data: data, ExpectModifyIndex: expect}.Command()
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// writeItems writes n items named prefix-0… through the leader and
// returns the last result index.
func writeItems(t *testing.T, c *harness.Cluster, prefix string, n int) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), harness.DefaultTimeout)
	defer cancel()
	var last uint64
	for i := range n {
		res, err := c.ApplyRetry(ctx, putItem(t, fmt.Sprintf("%s-%03d", prefix, i), 0, nil))
		if err != nil {
			t.Fatalf("write %s-%03d: %v (%s)", prefix, i, err, c.Describe())
		}
		last = res.Index
	}
	return last
}

func mustApply(t *testing.T, c *harness.Cluster, cmd store.Command) store.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), harness.DefaultTimeout)
	defer cancel()
	res, err := c.Apply(ctx, cmd)
	if err != nil {
		t.Fatalf("apply %s: %v (%s)", cmd.Type, err, c.Describe())
	}
	return res
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), harness.DefaultTimeout)
	t.Cleanup(cancel)
	return ctx
}

// objectsOf lists every object a replica holds of kind, as comparable strings.
func objectsOf(s *store.State, kind string) []string {
	var out []string
	for _, o := range s.List(kind) {
		out = append(out, fmt.Sprintf("%s@%d:%d=%s", o.Name, o.CreateIndex, o.ModifyIndex, o.Data))
	}
	return out
}

func delItem(t *testing.T, id string) store.Command {
	t.Helper()
	cmd, err := store.Delete{Kind: itemKind, Name: id}.Command()
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}
