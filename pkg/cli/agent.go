package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/agent"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/runtime"
	"kcore.dev/kcore/pkg/version"
	"kcore.dev/kcore/pkg/volume"
)

const agentLong = `kcore-node-agent runs on every node. It joins the controller once with a
one-time token (keeping its node certificate under ROOT/var/lib/kcore/agent),
then heartbeats, reports the machine's facts, long-polls what the controller
rendered for this node and applies it: volumes, files, units, tasks. It only
writes under --root, inside kcore's own directories (/etc/kubernetes,
/etc/kcore, /var/lib/kcore, /mnt/kcore, …), and restarts a unit only when its
inputs changed.

Runtimes: supervisor (built in; processes survive an agent restart and are
adopted, never duplicated), systemd (unit files + systemctl) and nixos (writes
/etc/kcore/node-state.json for the kcore NixOS module, then nixos-rebuild
switch).`

// agentFlags are the flags shared by kcore-node-agent and its subcommands.
type agentFlags struct {
	controllers []string
	nodeID      string
	joinToken   string
	tokenFile   string
	caFile      string
	root        string
	runtime     string
	binDir      string
	releasesDir string
	labels      []string
	arp         []string
	logLevel    string
	// drainPods is not a flag: the binary's CRI client (WithPodDrain).
	drainPods PodDrainer
}

// NewAgent returns kcore-node-agent's root command.
func NewAgent(s Streams, opts ...AgentOption) *cobra.Command {
	var fl agentFlags
	for _, o := range opts {
		o(&fl)
	}
	root := &cobra.Command{
		Use:   "kcore-node-agent --controller ADDR --node-id ID [--join-token T --ca-file FILE]",
		Short: "kcore's node agent: applies what the controller rendered for this node",
		Long:  agentLong,
		Example: `  kcore-node-agent --controller 10.0.0.1:7443 --ca-file ca.crt --join-token TOKEN --node-id node-105
  kcore-node-agent apply -f nodestate.json --root /tmp/lab
  kcore-node-agent facts`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgent(cmd, s, &fl)
		},
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	pf := root.PersistentFlags()
	pf.StringVar(&fl.root, "root", "/", "host root every path is resolved under")
	pf.StringVar(&fl.runtime, "runtime", "supervisor", "unit runtime: supervisor, systemd or nixos")
	pf.StringVar(&fl.binDir, "bin-dir", "", "directory searched first for unit and task binaries")
	pf.StringVar(&fl.releasesDir, "releases-dir", "", "directory with one subdirectory per Kubernetes release (DIR/v1.37.2/kube-apiserver); units pinned to a release run from there, so a ClusterUpdate switches binaries")
	pf.StringArrayVar(&fl.labels, "label", nil, "node label k=v reported with the facts (repeatable)")
	pf.StringArrayVar(&fl.arp, "arp-check", nil, "address (ADDR or ADDR%IFACE) whose ARP answer the facts report (repeatable)")
	pf.StringVar(&fl.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f := root.Flags()
	f.StringArrayVar(&fl.controllers, "controller", nil, "controller API address host:port (repeatable)")
	f.StringVar(&fl.nodeID, "node-id", "", "this node's id (required)")
	f.StringVar(&fl.joinToken, "join-token", "", "one-time join token from 'kctl node token create' (first start only)")
	f.StringVar(&fl.tokenFile, "join-token-file", "", "file holding the join token (keeps it out of the process list)")
	f.StringVar(&fl.caFile, "ca-file", "", "controller CA certificate, to verify the controllers when joining")
	root.AddCommand(newAgentApplyCmd(s, &fl), newAgentFactsCmd(s, &fl), newAgentEtcdBackupCmd(s, &fl), newAgentVersionCmd(s))
	return root
}

func newAgentVersionCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the kcore-node-agent version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(s.Out, "kcore-node-agent %s\n", version.Version)
			return err
		},
	}
}

func signalContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func (fl *agentFlags) logger(w io.Writer) (*slog.Logger, error) {
	level, err := parseControllerLogLevel(fl.logLevel)
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), nil
}

func (fl *agentFlags) labelMap() (map[string]string, error) {
	out := map[string]string{}
	for _, l := range fl.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("parse --label %q: want key=value", l)
		}
		out[k] = v
	}
	return out, nil
}

func (fl *agentFlags) arpTargets() []agent.ARPTarget {
	var out []agent.ARPTarget
	for _, a := range fl.arp {
		addr, iface, _ := strings.Cut(a, "%")
		out = append(out, agent.ARPTarget{Address: addr, Interface: iface})
	}
	return out
}

// node is everything the agent builds from its flags.
type node struct {
	root      string
	runtime   runtime.Runtime
	applier   *agent.Applier
	collector *agent.Collector
	close     func()
}

func (fl *agentFlags) build(log *slog.Logger) (*node, error) {
	root, err := filepath.Abs(fl.root)
	if err != nil {
		return nil, fmt.Errorf("parse --root: %w", err)
	}
	labels, err := fl.labelMap()
	if err != nil {
		return nil, err
	}
	runner := execrun.Exec{Path: []string{fl.binDir}}
	n := &node{root: root, close: func() {}}
	switch fl.runtime {
	case "supervisor":
		sup, err := runtime.NewSupervisor(runtime.SupervisorConfig{Root: root, BinDir: fl.binDir, ReleasesDir: fl.releasesDir, Log: log.With("component", "supervisor")})
		if err != nil {
			return nil, err
		}
		n.runtime, n.close = sup, func() { sup.Close() }
	case "systemd":
		n.runtime = &runtime.Systemd{Root: root, BinDir: fl.binDir, ReleasesDir: fl.releasesDir, Runner: runner, Log: log.With("component", "systemd")}
	case "nixos":
		nx, err := runtime.NewNixOS(root, fl.binDir, runner, log.With("component", "nixos"))
		if err != nil {
			return nil, err
		}
		n.runtime = nx
	default:
		return nil, fmt.Errorf("parse --runtime %q: want supervisor, systemd or nixos", fl.runtime)
	}
	vols := &volume.Manager{
		Runner: runner, StateDir: filepath.Join(root, agent.AgentDir), Log: log.With("component", "volume"),
		// Disks are named as the facts list them: <root>/dev/disk/by-id,
		// which with --root / is /dev/disk/by-id itself.
		ByIDDir: filepath.Join(root, api.DiskByIDDir),
		Resolve: func(p string) (string, error) { return agent.MountPoint(root, p) },
	}
	n.applier = &agent.Applier{Root: root, Runtime: n.runtime, Volumes: vols, Runner: runner, BinDir: fl.binDir, Log: log.With("component", "apply")}
	if fl.drainPods != nil {
		dlog := log.With("component", "cri-drain")
		n.applier.DrainPods = func(ctx context.Context, endpoint string) error { return fl.drainPods(ctx, dlog, endpoint) }
	}
	if root != "/" {
		n.applier.Rebase = func(ns *api.NodeState) *api.NodeState { return render.Rebase(ns, root) }
	}
	n.collector = &agent.Collector{Root: root, Runner: runner, BinDir: fl.binDir, Labels: labels, Log: log.With("component", "facts")}
	return n, nil
}

func runAgent(cmd *cobra.Command, s Streams, fl *agentFlags) error {
	if fl.nodeID == "" || len(fl.controllers) == 0 {
		return errors.New("run agent: --node-id and at least one --controller are required")
	}
	log, err := fl.logger(s.Err)
	if err != nil {
		return err
	}
	n, err := fl.build(log)
	if err != nil {
		return err
	}
	defer n.close()
	a := &agent.Agent{
		NodeID: fl.nodeID, Root: n.root, Applier: n.applier, Facts: n.collector, ARP: fl.arpTargets(),
		Log: log.With("component", "agent", "node", fl.nodeID),
		Connect: func(_ context.Context, c agent.Credentials, certs *agent.CertSource) (agent.Controller, error) {
			cfg := client.Config{Addresses: fl.controllers, CA: c.CA, Cert: c.Cert, Key: c.Key, Logger: log}
			if certs != nil {
				cfg.GetClientCertificate = certs.GetClientCertificate
			}
			return client.New(cfg)
		},
	}
	token, err := fl.token()
	if err != nil {
		return err
	}
	if token != "" {
		a.Join = func(ctx context.Context) (agent.Credentials, error) {
			if fl.caFile == "" {
				return agent.Credentials{}, errors.New("join: --ca-file is required with --join-token")
			}
			ca, err := os.ReadFile(fl.caFile)
			if err != nil {
				return agent.Credentials{}, fmt.Errorf("join: %w", err)
			}
			res, err := client.Join(ctx, client.Config{Addresses: fl.controllers, CA: ca, Logger: log}, token, fl.nodeID)
			if err != nil {
				return agent.Credentials{}, err
			}
			return agent.Credentials{Cert: []byte(res.Cert), Key: []byte(res.Key), CA: []byte(res.CA)}, nil
		}
	}
	ctx, stop := signalContext(cmd)
	defer stop()
	log.Info("starting kcore-node-agent", "node", fl.nodeID, "root", n.root, "runtime", fl.runtime)
	return a.Run(ctx)
}

// token is --join-token, or the trimmed content of --join-token-file.
func (fl *agentFlags) token() (string, error) {
	if fl.tokenFile == "" {
		return fl.joinToken, nil
	}
	if fl.joinToken != "" {
		return "", errors.New("run agent: --join-token and --join-token-file exclude each other")
	}
	data, err := os.ReadFile(fl.tokenFile)
	if err != nil {
		return "", fmt.Errorf("read --join-token-file: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}

func newAgentApplyCmd(s Streams, fl *agentFlags) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "apply -f NODESTATE.json",
		Short: "Apply NodeState JSON (one object or an array) once, offline, and print the reports",
		Long: `Apply NodeState JSON once, without a controller: volumes, files, units and
tasks, exactly as the agent loop would, then print the per-item reports as
JSON. Only the clusters in the file are touched. With the supervisor runtime
the units keep running after the command exits; the agent adopts them later.
Exits 1 when an item failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			states, err := readNodeStates(s.In, file)
			if err != nil {
				return err
			}
			log, err := fl.logger(s.Err)
			if err != nil {
				return err
			}
			n, err := fl.build(log)
			if err != nil {
				return err
			}
			defer n.close()
			n.applier.Partial = true
			ctx, stop := signalContext(cmd)
			defer stop()
			reports, err := n.applier.Apply(ctx, states)
			if out, merr := json.MarshalIndent(reports, "", "  "); merr == nil {
				fmt.Fprintln(s.Out, string(out))
			}
			if err != nil {
				return fmt.Errorf("apply: %w", err)
			}
			for _, r := range reports {
				for _, it := range r.Items {
					if it.State == api.ItemFailed {
						return fmt.Errorf("apply: %s %s failed: %s", it.Kind, it.Name, it.Message)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "NodeState JSON file, - for standard input (required)")
	return cmd
}

// readNodeStates reads one NodeState or an array of them, strictly.
func readNodeStates(stdin io.Reader, file string) ([]api.NodeState, error) {
	if file == "" {
		return nil, errors.New("read node state: -f FILE is required")
	}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("read node state: %w", err)
	}
	trimmed := strings.TrimSpace(string(data))
	var states []api.NodeState
	if strings.HasPrefix(trimmed, "[") {
		err = decodeStrict(trimmed, &states)
	} else {
		var one api.NodeState
		err = decodeStrict(trimmed, &one)
		states = []api.NodeState{one}
	}
	if err != nil {
		return nil, fmt.Errorf("read node state %s: %w", file, err)
	}
	return states, nil
}

func decodeStrict(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func newAgentFactsCmd(s Streams, fl *agentFlags) *cobra.Command {
	var fsync bool
	cmd := &cobra.Command{
		Use:   "facts",
		Short: "Measure and print this node's facts as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := fl.logger(s.Err)
			if err != nil {
				return err
			}
			labels, err := fl.labelMap()
			if err != nil {
				return err
			}
			root, err := filepath.Abs(fl.root)
			if err != nil {
				return fmt.Errorf("parse --root: %w", err)
			}
			c := &agent.Collector{Root: root, Runner: execrun.Exec{Path: []string{fl.binDir}}, BinDir: fl.binDir, Labels: labels, Log: log}
			ctx, stop := signalContext(cmd)
			defer stop()
			facts, err := c.Collect(ctx, agent.Probe{ARP: fl.arpTargets(), Fsync: fsync})
			out, merr := json.MarshalIndent(facts, "", "  ")
			if merr != nil {
				return fmt.Errorf("print facts: %w", merr)
			}
			fmt.Fprintln(s.Out, string(out))
			if err != nil {
				log.Warn("some facts could not be measured", "err", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fsync, "fsync", false, "also run the fsync latency probe of ROOT/var/lib/etcd")
	return cmd
}
