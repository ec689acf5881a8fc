package proccluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/controller"
)

// TestFaultVerbs drives every fault verb against real processes: a write
// survives the SIGKILLed leader, the restarted replica comes back on its
// addresses and catches up, and a SIGSTOPped follower neither blocks
// writes nor misses them once resumed.
func TestFaultVerbs(t *testing.T) {
	c := New(t, Options{})
	cl := c.Client(apiv1.RoleClusterAdmin)
	put := func(name string) uint64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		defer cancel()
		idx, err := cl.Put(ctx, "Probe", name, map[string]any{"n": name}, nil)
		if err != nil {
			t.Fatalf("put %s: %v", name, err)
		}
		return idx
	}
	hasStale := func(i int, name string, idx uint64) {
		t.Helper()
		rc := c.ReplicaClient(i, apiv1.RoleClusterAdmin)
		c.Eventually(DefaultTimeout, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
			defer cancel()
			o, _, err := rc.GetWith(ctx, "Probe", name, client.ReadOptions{Stale: true})
			if err == nil && o.ModifyIndex != idx {
				t.Fatalf("%s on replica %d is at index %d, want %d", name, i, o.ModifyIndex, idx)
			}
			return err
		})
	}

	put("before")
	old := c.Leader()
	c.Kill(old.Index)
	if c.proc(old).Running() {
		t.Fatalf("%s still running after Kill", old.ID)
	}
	idx := put("after-kill")
	if l := c.Leader(); l == old {
		t.Fatalf("killed %s is still leader", old.ID)
	}
	api := old.API
	c.Restart(old.Index)
	if old.API != api {
		t.Fatalf("%s restarted on %s, not %s", old.ID, old.API, api)
	}
	c.WaitCaughtUp()
	hasStale(old.Index, "after-kill", idx)

	follower := (c.Leader().Index + 1) % len(c.Replicas())
	c.Pause(follower)
	idx = put("while-paused")
	c.Resume(follower)
	c.WaitCaughtUp()
	hasStale(follower, "while-paused", idx)

	log, err := os.ReadFile(old.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(log, []byte(controller.LogStarted)); n != 2 {
		t.Fatalf("%s logged %d starts, want 2 (start and restart)", filepath.Base(old.LogPath), n)
	}
}

// TestTailFileAtBound checks the failure dump keeps exactly the last
// maxLogDump bytes of a longer log and all of a log of that size.
func TestTailFileAtBound(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{maxLogDump - 1, maxLogDump, maxLogDump + 1} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte('a' + i%26)
		}
		path := filepath.Join(dir, "log")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := tailFile(path, maxLogDump)
		if err != nil {
			t.Fatal(err)
		}
		want := data[max(0, size-maxLogDump):]
		if !bytes.Equal(got, want) {
			t.Fatalf("size %d: got %d bytes, want the last %d", size, len(got), len(want))
		}
	}
}
