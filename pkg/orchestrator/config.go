package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
)

// Defaults of Config.
const (
	DefaultHealthInterval   = 30 * time.Second
	DefaultRetryInterval    = 2 * time.Second
	DefaultHeartbeatTimeout = 90 * time.Second
	DefaultDeleteGrace      = 10 * time.Minute
	DefaultDeleteTimeout    = 15 * time.Minute
	DefaultDrainTimeout     = 60 * time.Second
	DefaultStepTimeout      = 10 * time.Minute
)

// Raft is what the orchestrator needs of a replica: the replicated store and
// the way to commit to it. *raftnode.Node implements it.
type Raft interface {
	// State is the replica's store, for reads and blocking queries.
	State() *store.State
	// Apply replicates a command and returns its result.
	Apply(ctx context.Context, cmd store.Command) (store.Result, error)
	// Barrier waits until everything committed before it is applied locally.
	Barrier(ctx context.Context) error
}

// Config configures an Orchestrator.
type Config struct {
	// Node is the leader replica's raft node.
	Node Raft
	// Keyring seals the cluster secrets and the secret files of NodeStates.
	Keyring *secrets.Keyring
	// Now is the clock stamped on commands, conditions and certificates; nil
	// means time.Now.
	Now func() time.Time
	// HealthInterval is how often every cluster's health is re-checked
	// (default 30s).
	HealthInterval time.Duration
	// RetryInterval is the longest a cluster waiting on health or etcd
	// membership (bootstrapping, updating, scaling) or a failed pass waits
	// for its retry (default 2s): the first retry comes after 250 ms and
	// each one in a row waits twice as long as the one before, up to it.
	RetryInterval time.Duration
	// HeartbeatTimeout is how long a member may go without a heartbeat
	// before NodesHeartbeating turns False (default 90s).
	HeartbeatTimeout time.Duration
	// DeleteGrace is how long a delete waits for a node that neither
	// reports the teardown nor heartbeats before it gives up on that node
	// (default 10m).
	DeleteGrace time.Duration
	// DeleteTimeout is how long a delete waits, from its first teardown
	// pass, for nodes that heartbeat but do not report their teardown:
	// past it the cluster's Teardown condition turns Stuck naming them,
	// and a delete with --force gives up on them (default 15m).
	DeleteTimeout time.Duration
	// DrainTimeout is how long a node leaving the cluster is drained
	// before its teardown starts anyway (default 60s).
	DrainTimeout time.Duration
	// StepTimeout is how long a ClusterUpdate step may take to pass its
	// health gates before it fails and the rollout pauses (default 10m).
	StepTimeout time.Duration
	// AddonGrace is how long the add-ons (CoreDNS, the local-path
	// provisioner) may stay unavailable, counted from the cluster's
	// bootstrap and from their last change to unavailable, before a ready
	// cluster turns degraded (default 5m). Becoming ready does not wait for
	// them.
	AddonGrace time.Duration
	// SpecKubeletBatch is how many nodes whose spec change restarts only
	// their kubelet get their new state in one step (default 2).
	SpecKubeletBatch int
	// RenderOptions are passed to render.Render.
	RenderOptions render.Options
	// Lifetime is how long the cluster leaves it issues are valid (they
	// are renewed at two thirds of it); zero means pki's default.
	Lifetime pki.Lifetime
	// LastSeen returns when a node last heartbeated (server.Server.LastSeen);
	// nil leaves NodesHeartbeating Unknown.
	LastSeen func(nodeID string) (time.Time, bool)
	// Logger receives the orchestrator's logs; nil discards them.
	Logger *slog.Logger
	// Checker runs the health checks; nil means an HTTPChecker.
	Checker Checker
	// Etcd changes etcd membership on scale; nil means an HTTPEtcd.
	Etcd EtcdMembership
	// Kube dials a cluster's Kubernetes API (finalize, drain, node
	// removal); nil means DialKube.
	Kube KubeDialer
	// Backups keeps etcd snapshots as sealed files on this replica's disk,
	// outside raft; nil keeps them inside raft and takes no scheduled
	// backups.
	Backups *etcdsnap.Files
	// ReplicaID is this replica's raft id, recorded as the holder of the
	// snapshot files it writes.
	ReplicaID string
	// BackupCheckInterval is how often due backups are looked for
	// (default DefaultBackupCheckInterval).
	BackupCheckInterval time.Duration
	// TakeSnapshot streams a snapshot of a cluster's etcd; nil streams it
	// through etcd's gateway (etcdsnap.Taker).
	TakeSnapshot func(ctx context.Context, c *api.KubernetesCluster, sec *pki.ClusterSecrets) (*etcdsnap.Snapshot, error)
	// FetchSnapshot returns the sealed file of a snapshot from one of the
	// replicas that hold it, for a restore on a leader that has none; nil
	// abandons such a restore.
	FetchSnapshot etcdsnap.Fetcher
}

func (c Config) withDefaults() (Config, error) {
	if c.Node == nil {
		return c, errors.New("orchestrator config: node is required")
	}
	if c.Keyring == nil {
		return c, errors.New("orchestrator config: keyring is required")
	}
	if err := c.Lifetime.Validate(); err != nil {
		return c, fmt.Errorf("orchestrator config: %w", err)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.HealthInterval <= 0 {
		c.HealthInterval = DefaultHealthInterval
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = DefaultRetryInterval
	}
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.DeleteGrace <= 0 {
		c.DeleteGrace = DefaultDeleteGrace
	}
	if c.DeleteTimeout <= 0 {
		c.DeleteTimeout = DefaultDeleteTimeout
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.StepTimeout <= 0 {
		c.StepTimeout = DefaultStepTimeout
	}
	if c.AddonGrace <= 0 {
		c.AddonGrace = DefaultAddonGrace
	}
	if c.SpecKubeletBatch <= 0 {
		c.SpecKubeletBatch = DefaultSpecKubeletBatch
	}
	if c.Kube == nil {
		c.Kube = DialKube
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Checker == nil {
		c.Checker = &HTTPChecker{}
	}
	if c.BackupCheckInterval <= 0 {
		c.BackupCheckInterval = DefaultBackupCheckInterval
	}
	if c.Etcd == nil {
		c.Etcd = &HTTPEtcd{}
	}
	return c, nil
}
