package render

import "fmt"

// Profile selects kubelet settings for a kind of machine.
type Profile string

// Profiles. The default suits production hosts; ProfileLab relaxes kubelet
// for nested labs and containers: failCgroupV1 false (cgroup v1 hosts keep
// working), cgroupsPerQOS false and enforceNodeAllocatable [] (no QoS cgroup
// hierarchy, which unprivileged or nested hosts cannot create), failSwapOn
// false; and containerd with restrict_oom_score_adj (a host without
// CAP_SYS_RESOURCE cannot lower a pod's oom_score_adj, so runc would fail to
// start every pod) and netns_mounts_under_state_dir (several nodes on one
// machine each keep their pods' network namespaces under their own state
// directory, removed with the node). It is never the default.
const (
	ProfileDefault Profile = ""
	ProfileLab     Profile = "lab"
)

// Defaults of Options.
const (
	DefaultEtcdDataDir              = "/var/lib/etcd"
	DefaultCgroupDriver             = "systemd"
	DefaultContainerRuntimeEndpoint = "unix:///run/containerd/containerd.sock"
	DefaultMaxPods                  = 110
	DefaultClusterDomain            = "cluster.local"
	DefaultRunDir                   = "/run/kcore"
)

// PodLogsDir is where kubelet keeps pod logs (its podLogsDir, upstream's
// default, written explicitly so that Rebase moves it: kubelets that share
// a machine must not share it, since each removes the log directories of
// pods it does not run).
const PodLogsDir = "/var/log/pods"

// Options are the node-independent settings of a render. The zero value is
// the production default.
type Options struct {
	// Profile is ProfileDefault or ProfileLab.
	Profile Profile
	// KubernetesVersion of the binaries on the nodes; it is part of every
	// Kubernetes unit's input hash, so a version change restarts them.
	KubernetesVersion string
	// EtcdDataDir defaults to /var/lib/etcd.
	EtcdDataDir string
	// EtcdClusterExists renders etcd with --initial-cluster-state=existing:
	// set it once the cluster has bootstrapped, so a control plane added
	// later (after etcdctl member add) joins instead of starting a new
	// cluster. Members that already have data ignore the flag.
	EtcdClusterExists bool
	// EtcdRestoreSnapshot is the gzipped etcd snapshot of the restore in
	// progress (cluster status etcdRestore): rendered onto every control
	// plane with the oneshot that restores it. Empty renders no restore.
	EtcdRestoreSnapshot []byte
	// CgroupDriver of kubelet, systemd (default) or cgroupfs.
	CgroupDriver string
	// ContainerRuntimeEndpoint defaults to containerd's socket.
	ContainerRuntimeEndpoint string
	// MaxPods per kubelet, default 110.
	MaxPods int
	// ClusterDomain defaults to cluster.local.
	ClusterDomain string
	// RunDir holds pid files (keepalived), default /run/kcore.
	RunDir string
	// HealthCheckCommand replaces keepalived's API health script line. Empty
	// renders `/usr/bin/curl -sfk --max-time <HealthCheckMaxTime> -o /dev/null
	// https://127.0.0.1:<port>/readyz`. Tests point it at a script they control.
	HealthCheckCommand string
	// UnreportedPool names the pool of a volume without a volumeGroup on a
	// node that has not reported a storage backend of its class yet. Empty
	// (the orchestrator) fails such a render with ErrNoStorageBackend;
	// plans set it so they can show the volume before the facts arrive.
	UnreportedPool string
}

func (o Options) withDefaults() (Options, error) {
	switch o.Profile {
	case ProfileDefault, ProfileLab:
	default:
		return o, fmt.Errorf("render options: profile %q: %w", o.Profile, ErrInvalid)
	}
	if o.EtcdDataDir == "" {
		o.EtcdDataDir = DefaultEtcdDataDir
	}
	if o.CgroupDriver == "" {
		o.CgroupDriver = DefaultCgroupDriver
	}
	if o.ContainerRuntimeEndpoint == "" {
		o.ContainerRuntimeEndpoint = DefaultContainerRuntimeEndpoint
	}
	if o.MaxPods == 0 {
		o.MaxPods = DefaultMaxPods
	}
	if o.ClusterDomain == "" {
		o.ClusterDomain = DefaultClusterDomain
	}
	if o.RunDir == "" {
		o.RunDir = DefaultRunDir
	}
	return o, nil
}
