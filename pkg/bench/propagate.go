package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/ctlproc"
	"kcore.dev/kcore/pkg/store"
)

// propagationCluster is the cluster name the propagation figure's NodeStates belong to.
const propagationCluster = "bench"

// agentWait is how long one blocking NodeState query waits.
const agentWait = 30 * time.Second

// propagationAgent is one simulated agent: its own client (own connection)
// long-polling its NodeState.
type propagationAgent struct {
	id string
	c  *client.Client
	// seen receives the generation of every state the agent gets, with the time.
	seen chan seenState
}

type seenState struct {
	gen int64
	at  time.Time
}

func (a *propagationAgent) run(ctx context.Context) {
	var idx uint64
	for ctx.Err() == nil {
		states, next, err := a.c.NodeState(ctx, a.id, idx, agentWait)
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			t := time.NewTimer(50 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		idx = next
		for _, s := range states {
			select {
			case a.seen <- seenState{gen: s.Generation, at: now}:
			default:
			}
		}
	}
}

// nodeStateBatch is one commit that touches every agent's NodeState.
func nodeStateBatch(ids []string, gen int64) (store.Command, error) {
	b := store.Batch{}
	for _, id := range ids {
		ns := api.NodeState{Cluster: propagationCluster, NodeID: id, Generation: gen, Files: []api.File{{
			Path: "/etc/kcore/bench", Mode: 0o644, Content: fmt.Sprintf("generation %d\n", gen),
		}}}
		data, err := json.Marshal(ns)
		if err != nil {
			return store.Command{}, fmt.Errorf("encode node state: %w", err)
		}
		b.Ops = append(b.Ops, store.Op{Put: &store.Put{Kind: api.KindNodeState, Name: apiv1.NodeStateName(propagationCluster, id), Data: data}})
	}
	cmd, err := b.Command()
	if err != nil {
		return store.Command{}, err
	}
	cmd.Time = time.Now().UTC().Format(time.RFC3339Nano)
	return cmd, nil
}

// propagationFigures commits rounds batches of agents NodeState puts on
// the in-process cluster's leader and times until each agent has its new
// state: p50 and p99 per round.
func propagationFigures(ctx context.Context, cl *inprocCluster, auth *ctlproc.Authority, agents, rounds int) ([]Figure, error) {
	leader := cl.leader()
	if leader == nil {
		return nil, errors.New("change propagation: no leader")
	}
	ctx, cancel := context.WithCancel(ctx)
	var ids []string
	var as []*propagationAgent
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range agents {
		id := fmt.Sprintf("node-%03d", i)
		c, err := auth.NewClient([]string{leader.HTTPAddr()}, apiv1.RoleNode, id)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		a := &propagationAgent{id: id, c: c, seen: make(chan seenState, 16)}
		ids, as = append(ids, id), append(as, a)
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.run(ctx)
		}()
	}
	var p50s, p99s []float64
	for r := range rounds + 1 {
		gen := int64(r + 1)
		cmd, err := nodeStateBatch(ids, gen)
		if err != nil {
			return nil, err
		}
		// Let every agent be back in its blocking query.
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		if _, err := leader.Node().Apply(ctx, cmd); err != nil {
			return nil, fmt.Errorf("change propagation: commit batch: %w", err)
		}
		lats, err := collectSeen(ctx, as, gen, start)
		if err != nil {
			return nil, err
		}
		if r == 0 {
			continue // the first round creates the objects and warms connections
		}
		l := LatenciesOf(lats)
		p50s, p99s = append(p50s, l.P50), append(p99s, l.P99)
	}
	note := fmt.Sprintf("%d agents, each its own client.Client and TLS connection, blocking on NodeState; one raft Batch of %d NodeState puts per round, timed from commit call to each agent's answer", agents, agents)
	p99 := measured("2", "change propagation p99", "ms", p99s).withNote(note)
	p99 = p99.withTarget("p99 < 250 ms (reference re-checks every 30 s)", *p99.Value < 250).withReference("reference product's re-check interval", 30000)
	return []Figure{
		measured("2", "change propagation p50", "ms", p50s).withNote(note),
		p99,
	}, nil
}

// collectSeen waits until every agent reports generation gen and returns
// each agent's delay after start.
func collectSeen(ctx context.Context, as []*propagationAgent, gen int64, start time.Time) ([]time.Duration, error) {
	deadline := time.NewTimer(agentWait)
	defer deadline.Stop()
	out := make([]time.Duration, 0, len(as))
	for _, a := range as {
		for got := false; !got; {
			select {
			case s := <-a.seen:
				if s.gen == gen {
					out = append(out, s.at.Sub(start))
					got = true
				}
			case <-deadline.C:
				return nil, fmt.Errorf("change propagation: agent %s did not get generation %d in %s", a.id, gen, agentWait)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return out, nil
}
