package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/gcbudget"
	"kcore.dev/kcore/pkg/orchestrator"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/pkg/version"
)

const controllerLong = `kcore-controller is one replica of kcore's Raft-replicated controller: the
source of truth for every KubernetesCluster, ClusterUpdate and node. It serves
the HTTPS API (mutual TLS, roles from client certificates) that kctl and the
node agents use, and replicates every write through Raft (TLS between
replicas, certificates with role controller).

Credentials come from 'kctl controller init', which writes one directory per
controller address (ca.crt, ca.key, server.crt, server.key, encryption.key).

One replica (the embedded default; no fault tolerance):

  kctl controller init --name home --controller 127.0.0.1:7443
  kcore-controller --pki-dir kcore-pki/controller-0 --data-dir /var/lib/kcore \
      --listen 127.0.0.1:7443 --bootstrap
  kctl controller members

Three replicas (survives the loss of one), on hosts 10.0.0.1-3:

  kctl controller init --name prod \
      --controller 10.0.0.1:7443 --controller 10.0.0.2:7443 --controller 10.0.0.3:7443
  # copy kcore-pki/controller-<i>/ to host i, then:
  host 1: kcore-controller --pki-dir pki --data-dir /var/lib/kcore --listen 10.0.0.1:7443 --bootstrap
  host 2: kcore-controller --pki-dir pki --data-dir /var/lib/kcore --listen 10.0.0.2:7443 --join 10.0.0.1:7443
  host 3: kcore-controller --pki-dir pki --data-dir /var/lib/kcore --listen 10.0.0.3:7443 --join 10.0.0.1:7443

--bootstrap only forms a cluster on an empty data dir; restarting a replica
needs neither flag (its data dir remembers the cluster). Raft listens on the
API port + 1 unless --raft-listen says otherwise. Listening on 0.0.0.0 needs
--advertise with an address the other replicas and kctl can reach.

Five replicas work the same way (survives the loss of two). Remove a replica
for good with 'kctl controller remove ID'; a removal that would lose quorum is
refused.`

// NewController returns kcore-controller's root command.
func NewController(s Streams) *cobra.Command {
	var (
		cfg       controller.Config
		logLevel  string
		certGrace time.Duration
		gcBudget  int
	)
	root := &cobra.Command{
		Use:           "kcore-controller --pki-dir DIR --data-dir DIR --listen ADDR (--bootstrap | --join ADDR)",
		Short:         "kcore's Raft-replicated controller",
		Long:          controllerLong,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			level, err := parseControllerLogLevel(logLevel)
			if err != nil {
				return err
			}
			if cfg.NodeCertGrace, err = nodeCertGrace(certGrace); err != nil {
				return err
			}
			cfg.Logger = slog.New(slog.NewTextHandler(s.Err, &slog.HandlerOptions{Level: level}))
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			if gcBudget < 0 {
				return fmt.Errorf("--gc-budget-mib %d: want 0 (off) or a size in MiB", gcBudget)
			}
			defer gcbudget.Start(uint64(gcBudget) << 20).Stop()
			cfg.Logger.Info("starting kcore-controller", "version", version.Version, "schema", version.Schema)
			return controller.Run(ctx, cfg)
		},
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	f := root.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", "", "directory for the raft log and snapshots (required)")
	f.StringVar(&cfg.LogStore, "log-store", raftnode.DefaultLogStore, "raft log store: wal (append-only segments, one fsync per batch; a bolt data dir is migrated at start and its raft.db kept as raft.db.migrated) or bolt (the bbolt file of earlier releases; refused on a data dir already migrated)")
	f.StringVar(&cfg.Listen, "listen", "", "HTTPS API listen address, e.g. 10.0.0.1:7443 (required)")
	f.StringVar(&cfg.Advertise, "advertise", "", "API address other replicas and clients use (default: --listen)")
	f.StringVar(&cfg.RaftListen, "raft-listen", "", "raft listen address (default: --listen host, port + 1)")
	f.StringVar(&cfg.RaftAdvertise, "raft-advertise", "", "raft address other replicas dial (default: --advertise host, raft port)")
	f.StringVar(&cfg.ID, "id", "", "this replica's raft id (default: --advertise)")
	f.BoolVar(&cfg.Bootstrap, "bootstrap", false, "form a new cluster with this replica as its first voter (empty data dir only)")
	f.StringArrayVar(&cfg.Join, "join", nil, "API address of an existing replica to join through (repeatable)")
	f.StringVar(&cfg.PKIDir, "pki-dir", "", "directory with ca.crt, ca.key, server.crt, server.key from 'kctl controller init' (required)")
	f.StringVar(&cfg.EncryptionKeyFile, "encryption-key", "", "32-byte secrets key file (default: PKI_DIR/encryption.key)")
	f.DurationVar(&cfg.HealthInterval, "health-interval", 30*time.Second, "how often the leader re-checks every cluster's health (etcd quorum, API /readyz, heartbeats)")
	f.DurationVar(&cfg.AddonGrace, "addon-grace", orchestrator.DefaultAddonGrace, "how long a ready cluster's add-ons (CoreDNS, the local-path provisioner) may stay unavailable before it turns degraded; becoming ready does not wait for them")
	f.DurationVar(&cfg.DeleteTimeout, "delete-timeout", orchestrator.DefaultDeleteTimeout, "how long a cluster delete waits for nodes that heartbeat but do not report their teardown before its Teardown condition turns Stuck naming them; a delete with --force then finishes without them")
	f.DurationVar(&cfg.NodeCertValidity, "node-cert-validity", apiv1.DefaultNodeCertValidity, "how long node certificates are valid (10m to 2160h); agents renew theirs at two thirds of it")
	f.DurationVar(&certGrace, "node-cert-grace", server.DefaultNodeCertGrace, "how long after its expiry a node certificate may still renew itself (POST /v1/nodes/{id}/renew, the only call it is let in for), so an agent whose machine was off past --node-cert-validity recovers without a join token; only the node's current certificate renews, never a revoked or re-keyed one (1h to 2160h; 0 turns it off: an expired certificate then needs a re-key token)")
	f.DurationVar(&cfg.Lifetime.Leaf, "leaf-validity", pki.DefaultLeafValidity, fmt.Sprintf("how long the leaf certificates the controller issues are valid: its own server certificate and every cluster's (etcd, API server, kubelet, front proxy, admin kubeconfigs); each is renewed at two thirds of it (%s to %s; short values are for tests and the lab)", pki.MinLeafValidity, pki.MaxLeafValidity))
	f.DurationVar(&cfg.CertCheckInterval, "cert-check-interval", 0, fmt.Sprintf("how often a replica reloads its server.crt/server.key when they changed on disk and renews its own certificate when due (default %s, or --leaf-validity/%d when that is shorter)", controller.DefaultCertCheckInterval, controller.CertChecksPerLifetime))
	f.StringVar((*string)(&cfg.RenderOptions.Profile), "render-profile", "", "kubelet settings profile of every rendered node: empty (production) or lab (cgroup v1, no QoS cgroups; see docs/lab.md)")
	f.StringVar(&cfg.RenderOptions.KubernetesVersion, "kubernetes-version", "", "Kubernetes release new clusters run, e.g. v1.37.2 (recorded in each cluster at creation; agents with --releases-dir run it from DIR/v1.37.2/); a ClusterUpdate moves it later")
	f.Float64Var(&cfg.Anonymous.Rate, "anonymous-rate", server.DefaultAnonymousRate, "requests per second one source address may send without a client certificate (joins), once its burst is spent; past it the API answers 429")
	f.IntVar(&cfg.Anonymous.Burst, "anonymous-burst", server.DefaultAnonymousBurst, "requests one source address may send at once without a client certificate")
	f.IntVar(&cfg.Anonymous.MaxSources, "anonymous-max-sources", server.DefaultAnonymousSources, "source addresses the anonymous rate limiter tracks; the least recently seen is forgotten past it")
	f.DurationVar(&cfg.Anonymous.SummaryInterval, "anonymous-summary-interval", server.DefaultSummaryInterval, "how often each replica writes one audit entry summarising its failed requests without a client certificate (none when there were none)")
	f.DurationVar(&cfg.AuditRetention.MaxAge, "audit-max-age", server.DefaultAuditMaxAge, "drop audit entries older than this (the leader's flag applies to every replica)")
	f.IntVar(&cfg.AuditRetention.MaxEntries, "audit-max-entries", server.DefaultAuditMaxEntries, "keep at most this many audit entries, dropping the oldest")
	f.Int64Var(&cfg.AuditRetention.MaxBytes, "audit-max-bytes", server.DefaultAuditMaxBytes, "keep at most this many bytes of audit entries, dropping the oldest")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.IntVar(&gcBudget, "gc-budget-mib", gcbudget.DefaultBudget>>20, "heap in MiB (goroutine stacks counted) the garbage collector lets grow before it collects while Go's default would collect sooner; 0 turns it off, and a GOGC or GOMEMLIMIT environment variable wins")
	addLimitFlags(f, &cfg)
	root.AddCommand(newControllerVersionCmd(s))
	return root
}

func newControllerVersionCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the kcore-controller version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(s.Out, "kcore-controller %s (schema %d)\n", version.Version, version.Schema)
			return err
		},
	}
}

// nodeCertGrace reads --node-cert-grace: 0 turns the grace off, a
// negative value is refused, and controller.Config checks the bounds.
func nodeCertGrace(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return server.NoNodeCertGrace, nil
	case d < 0:
		return 0, fmt.Errorf("parse --node-cert-grace %s: want 0 (off) or %s to %s", d, server.MinNodeCertGrace, server.MaxNodeCertGrace)
	}
	return d, nil
}

func parseControllerLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return 0, fmt.Errorf("parse --log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// addLimitFlags adds the flags of the API's and the raft port's connection
// and read bounds (docs/controller.md, "Connection and resource limits").
func addLimitFlags(f *pflag.FlagSet, cfg *controller.Config) {
	a, r := &cfg.APILimits, &cfg.RaftLimits
	f.IntVar(&a.MaxConns, "max-conns", server.DefaultMaxConns, "API connections held at once; past it new ones are closed at once")
	f.IntVar(&a.MaxConnsPerSource, "max-conns-per-source", server.DefaultMaxConnsPerSource, "API connections held at once from one source IP")
	f.DurationVar(&a.BodyTimeout, "body-timeout", server.DefaultBodyTimeout, "how long the API reads a request body from a caller with a client certificate")
	f.DurationVar(&a.AnonymousBodyTimeout, "anonymous-body-timeout", server.DefaultAnonymousBodyTimeout, "how long the API reads a request body from a caller without one")
	f.IntVar(&r.MaxConns, "raft-max-conns", controller.DefaultRaftMaxConns, "inbound raft connections held at once")
	f.IntVar(&r.MaxConnsPerSource, "raft-max-conns-per-source", controller.DefaultRaftMaxConnsPerSource, "inbound raft connections held at once from one source IP")
	f.DurationVar(&r.HandshakeTimeout, "raft-handshake-timeout", controller.DefaultRaftHandshakeTimeout, "how long an inbound raft connection may take to finish its TLS handshake")
	f.DurationVar(&r.IdleTimeout, "raft-idle-timeout", controller.DefaultRaftIdleTimeout, "how long an inbound raft connection may stay silent after its handshake before its first RPC")
}
