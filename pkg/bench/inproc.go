package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/ctlproc"
	"kcore.dev/kcore/pkg/server"
)

// readyTimeout bounds how long a cluster may take to form.
const readyTimeout = 90 * time.Second

// benchConns is the replicas' API connection cap, in all and per source
// address, in every figure: the writers of figure 1 and the agents of
// figure 3 are clients of their own, all on 127.0.0.1, which the default
// per-source cap (meant for one machine's share) would half refuse; twice
// the default total leaves room for figure 3's thousand agents.
const benchConns = 2 * server.DefaultMaxConns

// inprocCluster is three controller replicas in this process
// (controller.Start: raft over TLS and the HTTPS API with mTLS): figure 2's
// cluster, and each run's cluster figure 1's split rows apply to straight
// through its leader's raft node, so a CPU profile of the bench shows
// their hot paths.
type inprocCluster struct {
	ctrls []*controller.Controller
}

// startInproc starts three replicas under root with the given raft log
// store (raftnode.LogStoreWAL or LogStoreBolt; empty for the default).
func startInproc(ctx context.Context, root string, auth *ctlproc.Authority, log *slog.Logger, logStore string) (*inprocCluster, error) {
	c := &inprocCluster{}
	for i := range 3 {
		pkiDir, err := controllerDir(auth, root, i)
		if err != nil {
			c.close()
			return nil, err
		}
		cfg := controller.Config{
			DataDir:   filepath.Join(root, fmt.Sprintf("data-%d", i)),
			Listen:    "127.0.0.1:0",
			PKIDir:    pkiDir,
			Bootstrap: i == 0,
			LogStore:  logStore,
			Logger:    log.With("replica", i),
			APILimits: server.Limits{MaxConns: benchConns, MaxConnsPerSource: benchConns},
		}
		if i > 0 {
			cfg.Join = []string{c.ctrls[0].HTTPAddr()}
		}
		ctl, err := controller.Start(ctx, cfg)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("start in-process replica %d: %w", i, err)
		}
		c.ctrls = append(c.ctrls, ctl)
		if i == 0 {
			if err := poll(ctx, readyTimeout, func() error {
				if !ctl.Node().IsLeader() {
					return errors.New("replica 0 is not leader yet")
				}
				return nil
			}); err != nil {
				c.close()
				return nil, err
			}
		}
	}
	if err := poll(ctx, readyTimeout, c.formed); err != nil {
		c.close()
		return nil, fmt.Errorf("form in-process cluster: %w", err)
	}
	return c, nil
}

// formed reports nil once a leader has three members that all know it.
func (c *inprocCluster) formed() error {
	l := c.leader()
	if l == nil {
		return errors.New("no leader")
	}
	ms, err := l.Node().Members(context.Background())
	if err != nil {
		return err
	}
	if len(ms) != 3 {
		return fmt.Errorf("%d members", len(ms))
	}
	for i, ctl := range c.ctrls {
		if id, _ := ctl.Node().Leader(); id == "" {
			return fmt.Errorf("replica %d knows no leader", i)
		}
	}
	return nil
}

// leader returns the replica that is leader now, or nil.
func (c *inprocCluster) leader() *controller.Controller {
	for _, ctl := range c.ctrls {
		if ctl.Node().IsLeader() {
			return ctl
		}
	}
	return nil
}

// waitLeader returns the leader, waiting out an election: under a heavy
// load on this machine a replica may miss heartbeats and start one.
func (c *inprocCluster) waitLeader(ctx context.Context) (*controller.Controller, error) {
	var l *controller.Controller
	err := poll(ctx, readyTimeout, func() error {
		if l = c.leader(); l == nil {
			return errors.New("no leader")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("controller writes: %w", err)
	}
	return l, nil
}

func (c *inprocCluster) close() {
	for _, ctl := range c.ctrls {
		_ = ctl.Close()
	}
}

// poll calls cond every 50 ms until it returns nil or timeout passes.
func poll(ctx context.Context, timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
