package proccluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/ctlproc"
)

// Bounds of the cluster's own waits.
const (
	// DefaultTimeout bounds every wait the cluster does on its own: forming,
	// a leader, catching up, a restart's port.
	DefaultTimeout = 30 * time.Second
	// healthTimeout bounds one health request to one replica.
	healthTimeout = 2 * time.Second
)

// Options shapes a cluster. The zero value is a 3-replica cluster.
type Options struct {
	// Replicas is how many replicas New starts (default 3).
	Replicas int
	// Bin is the kcore-controller binary; default BinEnv, else one built
	// for the test binary.
	Bin string
	// Netns puts every replica in its own network namespace (root only),
	// which the partition verbs need; otherwise replicas listen on
	// loopback ports they pick.
	Netns bool
}

// Cluster is N kcore-controller processes forming one raft cluster.
type Cluster struct {
	t     testing.TB
	auth  *ctlproc.Authority
	admin *client.Client
	net   *network // nil without Options.Netns

	mu       sync.Mutex
	replicas []*Replica
}

// Replica is one kcore-controller process. Its addresses and dirs survive
// Kill and Restart.
type Replica struct {
	// Index is the replica's position in the cluster, from 0.
	Index int
	// ID is its raft id ("r0", "r1", …).
	ID string
	// API and Raft are the addresses it bound on its first start.
	API, Raft string
	// DataDir and LogPath are its data dir and its log file.
	DataDir, LogPath string

	spec   ctlproc.Spec
	proc   *ctlproc.Process
	paused bool
}

// New starts a cluster: replica 0 bootstraps, the others join it through
// its API, as --bootstrap and --join do. It waits until every replica is a
// voter and agrees on the leader. Every process is killed when the test
// ends, and the tails of their logs are printed if it failed.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Replicas <= 0 {
		opts.Replicas = 3
	}
	if opts.Bin == "" {
		opts.Bin = binary(t)
	}
	// Made before the cleanup is registered, so the processes die before
	// their dirs are removed (cleanups run last first).
	root := t.TempDir()
	var nw *network
	if opts.Netns {
		nw = newNetwork(t, opts.Replicas)
	}
	auth, err := ctlproc.NewAuthority("proccluster " + t.Name())
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, auth: auth, net: nw}
	t.Cleanup(c.shutdown)
	for i := range opts.Replicas {
		r := &Replica{
			Index:   i,
			ID:      fmt.Sprintf("r%d", i),
			DataDir: filepath.Join(root, fmt.Sprintf("data-%d", i)),
			LogPath: filepath.Join(root, fmt.Sprintf("controller-%d.log", i)),
		}
		pkiDir := filepath.Join(root, fmt.Sprintf("pki-%d", i))
		var ips []net.IP
		if nw != nil {
			ips = append(ips, nw.ip(i))
		}
		if err := auth.ControllerDir(pkiDir, r.ID, ips...); err != nil {
			t.Fatal(err)
		}
		r.spec = ctlproc.Spec{Bin: opts.Bin, ID: r.ID, PKIDir: pkiDir, DataDir: r.DataDir, LogPath: r.LogPath, Bootstrap: i == 0}
		if nw != nil {
			r.spec.Netns = nw.ns[i]
			r.spec.API = net.JoinHostPort(nw.addr(i), strconv.Itoa(apiPort))
			r.spec.Raft = net.JoinHostPort(nw.addr(i), strconv.Itoa(raftPort))
		}
		if i > 0 {
			r.spec.Join = []string{c.replicas[0].API}
		}
		c.start(r)
		c.mu.Lock()
		c.replicas = append(c.replicas, r)
		c.mu.Unlock()
	}
	c.admin = c.Client(apiv1.RoleClusterAdmin)
	c.Eventually(DefaultTimeout, func() error {
		l, err := c.leader()
		if err != nil {
			return err
		}
		h, err := c.health(l)
		if err != nil {
			return err
		}
		if len(h.Peers) != opts.Replicas {
			return fmt.Errorf("leader %s has %d voters, want %d", l.ID, len(h.Peers), opts.Replicas)
		}
		return nil
	})
	return c
}

// start runs r's process and records the addresses it bound; later starts
// reuse them, with neither --bootstrap nor --join.
func (c *Cluster) start(r *Replica) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	proc, err := ctlproc.Start(ctx, r.spec)
	if err != nil {
		c.t.Fatalf("start %s: %v", r.ID, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r.proc, r.paused = proc, false
	r.API, r.Raft = proc.API(), proc.Raft()
	r.spec.API, r.spec.Raft = r.API, r.Raft
	r.spec.Bootstrap, r.spec.Join = false, nil
}

func (c *Cluster) shutdown() {
	for _, r := range c.Replicas() {
		if p := c.proc(r); p != nil {
			if err := p.Kill(); err != nil {
				c.t.Errorf("stop %s: %v", r.ID, err)
			}
		}
	}
	if c.t.Failed() {
		c.dumpLogs()
	}
}

// Replicas returns every replica, running or not.
func (c *Cluster) Replicas() []*Replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Replica{}, c.replicas...)
}

// Replica returns replica i.
func (c *Cluster) Replica(i int) *Replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replicas[i]
}

func (c *Cluster) proc(r *Replica) *ctlproc.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return r.proc
}

// Running returns the replicas whose process is alive and not paused.
func (c *Cluster) Running() []*Replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Replica
	for _, r := range c.replicas {
		if r.proc != nil && r.proc.Running() && !r.paused {
			out = append(out, r)
		}
	}
	return out
}

// Kill SIGKILLs replica i's process and waits until it is gone.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	r := c.Replica(i)
	if err := c.proc(r).Kill(); err != nil {
		c.t.Fatalf("kill %s: %v", r.ID, err)
	}
}

// Restart starts a killed replica i again from its data dir on the same
// addresses. It retries while a port is still held, until DefaultTimeout.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	r := c.Replica(i)
	if c.proc(r).Running() {
		c.t.Fatalf("restart %s: still running", r.ID)
	}
	c.Eventually(DefaultTimeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		defer cancel()
		proc, err := ctlproc.Start(ctx, r.spec)
		if errors.Is(err, ctlproc.ErrExited) {
			return err
		}
		if err != nil {
			c.t.Fatalf("restart %s: %v", r.ID, err)
		}
		c.mu.Lock()
		r.proc, r.paused = proc, false
		c.mu.Unlock()
		return nil
	})
}

// Pause stops replica i's process with SIGSTOP: it holds its ports and
// connections but answers nothing, like a hung machine.
func (c *Cluster) Pause(i int) { c.signal(i, syscall.SIGSTOP, true) }

// Resume continues a paused replica i with SIGCONT.
func (c *Cluster) Resume(i int) { c.signal(i, syscall.SIGCONT, false) }

func (c *Cluster) signal(i int, sig syscall.Signal, paused bool) {
	c.t.Helper()
	r := c.Replica(i)
	if err := c.proc(r).Signal(sig); err != nil {
		c.t.Fatalf("%s %s: %v", sig, r.ID, err)
	}
	c.mu.Lock()
	r.paused = paused
	c.mu.Unlock()
}
