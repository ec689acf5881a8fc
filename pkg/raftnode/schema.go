package raftnode

import (
	"context"
	"sync"

	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/pkg/version"
)

// stampSchema sets the schema cmd is written in: a command stamped with
// this build's schema (as store.NewCommand stamps it) or with none is
// written in the schema the cluster writes (writeSchema), so that every
// replica, including those of an older release during a rolling upgrade,
// reads it. A command stamped with another schema keeps it.
func (n *Node) stampSchema(ctx context.Context, cmd *store.Command) error {
	if cmd.Schema != 0 && cmd.Schema != version.Schema {
		return nil
	}
	s, err := n.writeSchema(ctx)
	if err != nil {
		return err
	}
	cmd.Schema = s
	return nil
}

// writeSchema returns the schema the cluster writes: the lowest schema
// recorded by the servers of the latest raft configuration (voters and
// non-voters alike, as each applies the log), a server that recorded none
// counting as an unknown reader (store.State.WriteSchema). Once the last
// replica records version.Schema, the next write is in it.
func (n *Node) writeSchema(ctx context.Context) (int, error) {
	ids, ok, gen := n.servers.get()
	if !ok {
		f := n.raft.GetConfiguration()
		if err := n.wait(ctx, f); err != nil {
			return 0, n.mapErr("read configuration", err)
		}
		ids = make([]string, 0, len(f.Configuration().Servers))
		for _, s := range f.Configuration().Servers {
			ids = append(ids, string(s.ID))
		}
		n.servers.put(ids, gen)
	}
	return n.state.WriteSchema(ids), nil
}

// serverCache holds the server ids of the latest raft configuration, so
// that a write need not wait for raft's loop to read it. It is dropped
// when leadership or the peers change, and not kept while a membership
// change this node makes is in flight: a write then reads the
// configuration afresh, the new server included.
type serverCache struct {
	mu       sync.Mutex
	ids      []string
	valid    bool
	gen      uint64 // bumped on every drop, so a read older than it is not kept
	changing int    // membership changes in flight
}

// get returns the cached ids, whether they are valid, and the generation
// to hand put after reading the configuration.
func (c *serverCache) get() ([]string, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ids, c.valid && c.changing == 0, c.gen
}

// put keeps ids read at generation gen, unless the cache was dropped since
// or a change is in flight.
func (c *serverCache) put(ids []string, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen && c.changing == 0 {
		c.ids, c.valid = ids, true
	}
}

// drop forgets the cached ids.
func (c *serverCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids, c.valid = nil, false
	c.gen++
}

// begin marks a membership change in flight; end marks it done.
func (c *serverCache) begin() {
	c.mu.Lock()
	c.changing++
	c.mu.Unlock()
	c.drop()
}

func (c *serverCache) end() {
	c.mu.Lock()
	c.changing--
	c.mu.Unlock()
	c.drop()
}
