package controller

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"kcore.dev/kcore/pkg/orchestrator"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/pkg/version"
)

// PKI file names in Config.PKIDir, as `kctl controller init` writes them.
const (
	FileCACert        = "ca.crt"
	FileCAKey         = "ca.key"
	FileServerCert    = "server.crt"
	FileServerKey     = "server.key"
	FileEncryptionKey = "encryption.key"
)

// Config configures one controller replica.
type Config struct {
	// DataDir holds the raft log and snapshots.
	DataDir string
	// LogStore is the raft log store (raftnode.Config.LogStore): "wal" or
	// "bolt"; empty means raftnode.DefaultLogStore.
	LogStore string
	// Listen is the API's HTTPS listen address, e.g. 0.0.0.0:7443.
	Listen string
	// Advertise is the API address other replicas and clients use; default
	// Listen (which must then name a host).
	Advertise string
	// RaftListen is the raft transport's listen address; default the
	// Listen host with the Listen port + 1 (or :0 when Listen's port is 0).
	RaftListen string
	// RaftAdvertise is the raft address peers dial; default the Advertise
	// host with the raft port.
	RaftAdvertise string
	// ID is the raft server id; default Advertise.
	ID string
	// Bootstrap forms a new cluster when DataDir holds no raft state.
	Bootstrap bool
	// Join lists API addresses (host:port or https://host:port) of existing
	// members to ask for membership.
	Join []string
	// PKIDir holds ca.crt, ca.key, server.crt and server.key.
	PKIDir string
	// EncryptionKeyFile is the 32-byte secrets key; default PKIDir/encryption.key.
	EncryptionKeyFile string
	// Logger receives the replica's logs; nil discards them.
	Logger *slog.Logger
	// FastTimeouts shortens raft's timeouts, for in-process tests.
	FastTimeouts bool
	// Now is the server's clock; nil means time.Now.
	Now func() time.Time
	// JoinTimeout bounds how long a joining replica keeps asking; default 2m.
	JoinTimeout time.Duration
	// HealthInterval is how often the orchestrator re-checks every
	// cluster's health; default 30s.
	HealthInterval time.Duration
	// BackupCheckInterval is how often the leader looks for due scheduled
	// etcd backups; default orchestrator.DefaultBackupCheckInterval.
	BackupCheckInterval time.Duration
	// AddonGrace is how long a ready cluster's add-ons may stay
	// unavailable before it turns degraded (orchestrator.Config.AddonGrace);
	// default 5m.
	AddonGrace time.Duration
	// DeleteTimeout is how long a delete waits for nodes that heartbeat
	// but do not report their teardown before it turns Stuck
	// (orchestrator.Config.DeleteTimeout); default 15m.
	DeleteTimeout time.Duration
	// RenderOptions are the orchestrator's render options (e.g. the lab
	// profile).
	RenderOptions render.Options
	// HealthChecker replaces the orchestrator's HTTPS health checks; nil
	// means the real ones.
	HealthChecker orchestrator.Checker
	// KubeDialer replaces the orchestrator's Kubernetes API client
	// (finalize, drain, node removal); nil means the real one.
	KubeDialer orchestrator.KubeDialer
	// RaftLimits bound the raft port's inbound connections (handshake and
	// idle deadlines, connection caps); zero fields take the defaults.
	RaftLimits RaftLimits
	// APILimits bound the API's connections and request reads; zero fields
	// take the defaults.
	APILimits server.Limits
	// NoOrchestrator runs the replica without the orchestrator, so tests of
	// the API and of kctl can play its part by writing status themselves.
	NoOrchestrator bool
	// Anonymous limits and summarises API requests without a client
	// certificate; zero fields take the server's defaults.
	Anonymous server.AnonymousConfig
	// AuditRetention bounds the audit log; zero fields take the server's
	// defaults. The leader's is the one every replica trims by.
	AuditRetention server.AuditRetention
	// NodeCertValidity is how long node certificates are valid, between
	// MinNodeCertValidity and MaxNodeCertValidity; 0 means
	// apiv1.DefaultNodeCertValidity. Agents renew at two thirds of it.
	NodeCertValidity time.Duration
	// NodeCertGrace is how long after its expiry a node certificate may
	// still renew itself, and do nothing else (server.Config.NodeCertGrace):
	// 0 means server.DefaultNodeCertGrace, server.NoNodeCertGrace turns it
	// off, otherwise server.MinNodeCertGrace to server.MaxNodeCertGrace.
	NodeCertGrace time.Duration
	// Lifetime is the leaf lifetime of the certificates the replica
	// issues for itself (server.crt, renewed at two thirds of it) and the
	// orchestrator for clusters; zero fields take pki's defaults, and a
	// leaf may not be shorter than pki.MinLeafValidity.
	Lifetime pki.Lifetime
	// CertCheckInterval is how often the replica reloads its own
	// certificate files when they changed and renews its certificate when
	// due; default CertCheckIntervalFor(Lifetime).
	CertCheckInterval time.Duration
	// SnapshotCopyInterval is how often the replica copies the etcd
	// snapshot files it lacks from the others; default
	// DefaultSnapshotCopyInterval, negative never.
	SnapshotCopyInterval time.Duration

	// reportSchema, when set, is the controller schema the replica
	// records in its Member object instead of version.Schema: a test hook
	// standing in for a build of another schema.
	reportSchema int
}

// schema is the controller schema the replica records: version.Schema of
// its build.
func (c Config) schema() int {
	if c.reportSchema != 0 {
		return c.reportSchema
	}
	return version.Schema
}

// Bounds of Config.NodeCertValidity: short enough to renew often, long
// enough that an agent can ride out a controller outage.
const (
	MinNodeCertValidity = 10 * time.Minute
	MaxNodeCertValidity = 90 * 24 * time.Hour
)

// withDefaults validates the config and fills its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.DataDir == "" {
		return c, errors.New("config: --data-dir is required")
	}
	if c.PKIDir == "" {
		return c, errors.New("config: --pki-dir is required")
	}
	switch c.LogStore {
	case "", raftnode.LogStoreWAL, raftnode.LogStoreBolt:
	default:
		return c, fmt.Errorf("config: --log-store %q: want %s or %s", c.LogStore, raftnode.LogStoreWAL, raftnode.LogStoreBolt)
	}
	if c.Listen == "" {
		return c, errors.New("config: --listen is required")
	}
	if c.Bootstrap && len(c.Join) > 0 {
		return c, errors.New("config: --bootstrap and --join exclude each other")
	}
	if v := c.RenderOptions.KubernetesVersion; v != "" && rollout.Release(v) != v {
		return c, fmt.Errorf("config: --kubernetes-version %q: want a release like v1.37.2", v)
	}
	if v := c.NodeCertValidity; v != 0 && (v < MinNodeCertValidity || v > MaxNodeCertValidity) {
		return c, fmt.Errorf("config: --node-cert-validity %s: want %s to %s", v, MinNodeCertValidity, MaxNodeCertValidity)
	}
	if err := server.CheckNodeCertGrace(c.NodeCertGrace); err != nil {
		return c, fmt.Errorf("config: --node-cert-grace: %w", err)
	}
	if err := c.Lifetime.Validate(); err != nil {
		return c, fmt.Errorf("config: --leaf-validity: %w", err)
	}
	if c.CertCheckInterval <= 0 {
		c.CertCheckInterval = CertCheckIntervalFor(c.Lifetime)
	}
	if c.SnapshotCopyInterval == 0 {
		c.SnapshotCopyInterval = DefaultSnapshotCopyInterval
	}
	if c.EncryptionKeyFile == "" {
		c.EncryptionKeyFile = filepath.Join(c.PKIDir, FileEncryptionKey)
	}
	if c.RaftListen == "" {
		host, port, err := splitPort(c.Listen)
		if err != nil {
			return c, err
		}
		if port != 0 {
			port++
		}
		c.RaftListen = net.JoinHostPort(host, strconv.Itoa(port))
	}
	if c.JoinTimeout == 0 {
		c.JoinTimeout = 2 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// now is the replica's clock.
func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func splitPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("config: address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("config: address %q: port: %w", addr, err)
	}
	return host, port, nil
}

// advertised returns the address to advertise for a listener: adv when set,
// else the listener's address, which must not be unspecified.
func advertised(adv string, ln net.Addr, flag string) (string, error) {
	if adv != "" {
		return adv, nil
	}
	a, ok := ln.(*net.TCPAddr)
	if !ok || a.IP == nil || a.IP.IsUnspecified() {
		return "", fmt.Errorf("config: listening on %s: set %s to an address peers can reach", ln, flag)
	}
	return a.String(), nil
}

// withPort replaces the port of addr's host.
func withPort(addr string, port int) (string, error) {
	host, _, err := splitPort(addr)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}
