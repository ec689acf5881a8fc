package api

// KindNodeState is the kind of a rendered NodeState.
const KindNodeState = "NodeState"

// NodeState is everything one node must run for one cluster, rendered by the
// controller (pkg/render) and applied by the node agent (pkg/agent). Host
// paths are absolute as on the node; the agent resolves them under its --root.
type NodeState struct {
	// Cluster is the KubernetesCluster name.
	Cluster string `json:"cluster"`
	// NodeID is the node this state is for.
	NodeID string `json:"nodeId"`
	// Generation increases whenever the content changes.
	Generation int64 `json:"generation"`
	// Files to write, in order.
	Files []File `json:"files,omitempty"`
	// Units to run (long-running services or oneshots).
	Units []Unit `json:"units,omitempty"`
	// Volumes to create, grow and mount before units start.
	Volumes []VolumeOp `json:"volumes,omitempty"`
	// PurgeVolumes are volumes the agent must unmount and delete, only if
	// it created them (a cluster deleted with --purge-volumes); every other
	// volume is kept with its data.
	PurgeVolumes []VolumeOp `json:"purgeVolumes,omitempty"`
	// Tasks are oneshots that run when their input hash changes.
	Tasks []Task `json:"tasks,omitempty"`
}

// File is one file the agent writes atomically.
type File struct {
	// Path is absolute, as on the node.
	Path string `json:"path"`
	// Mode is the permission bits, e.g. 0o600 for keys.
	Mode uint32 `json:"mode"`
	// Content is the file's text.
	Content string `json:"content"`
	// Secret marks keys and kubeconfigs: never printed or logged.
	Secret bool `json:"secret,omitempty"`
	// Encoding says how Content encodes the file's bytes: empty for text,
	// EncodingBase64 or EncodingGzipBase64 for binary files (an etcd
	// snapshot); the agent decodes it before writing.
	Encoding string `json:"encoding,omitempty"`
	// Reason says in a few words what the file is for (e.g. "kube-apiserver
	// serving certificate, SANs …"), for plans. Render sets it; it is not
	// stored, sent to agents or hashed.
	Reason string `json:"-"`
}

// File encodings.
const (
	EncodingBase64     = "base64"
	EncodingGzipBase64 = "gzip+base64"
)

// Restart policies.
const (
	RestartAlways    = "always"
	RestartOnFailure = "on-failure"
	RestartNever     = "no"
)

// Unit is a process the node runtime supervises.
type Unit struct {
	// Name, e.g. kcore-etcd or kcore-kubernetes-cilium.
	Name string `json:"name"`
	// Argv is the command line; Argv[0] is a binary name resolved in the agent's --bin-dir, or an absolute path.
	Argv []string `json:"argv"`
	// Env is extra environment.
	Env map[string]string `json:"env,omitempty"`
	// After lists units that must be running (or have finished, for oneshots) first.
	After []string `json:"after,omitempty"`
	// Restart is always, on-failure or no.
	Restart string `json:"restart,omitempty"`
	// Oneshot units run to completion once per InputHash.
	Oneshot bool `json:"oneshot,omitempty"`
	// InputHash is the hash of every input (argv, env, files) that should restart the unit when changed.
	InputHash string `json:"inputHash"`
	// ReloadHash, when set, is the hash of the inputs (files) the process
	// reads again when it gets SIGHUP, which InputHash leaves out: when
	// only ReloadHash changed, the agent reloads the unit (SIGHUP to its
	// main process) instead of restarting it (keepalived's configuration).
	ReloadHash string `json:"reloadHash,omitempty"`
	// KillMode is how stopping or restarting the unit ends its processes:
	// empty ends every process of the unit, KillModeProcess only the main
	// one, so that what it started in groups of their own (containerd's
	// shims and their containers) outlives a restart.
	KillMode string `json:"killMode,omitempty"`
	// CRIEndpoint, when set, says the unit serves a CRI at this endpoint
	// (unix:///<path>): before the agent removes the unit for good (no
	// longer rendered, not restarted), it stops and removes every pod
	// sandbox there, since the pods outlive the unit's own process.
	CRIEndpoint string `json:"criEndpoint,omitempty"`
	// HealthURL, when set, is probed to decide whether the unit is healthy (e.g. https://127.0.0.1:6443/readyz).
	HealthURL string `json:"healthUrl,omitempty"`
	// Version pins the release of the unit's binary, e.g. v1.37.2: the
	// runtime resolves a bare argv[0] in <releases-dir>/<Version>/ (the
	// agent's --releases-dir) and fails the unit when it is missing there.
	// Empty (or an agent without --releases-dir) uses --bin-dir.
	Version string `json:"version,omitempty"`
	// Reason and Inputs are for plans: what the unit is, and the files
	// its InputHash or ReloadHash covers. Render sets them; they are not stored, sent to
	// agents or hashed.
	Reason string   `json:"-"`
	Inputs []string `json:"-"`
}

// KillModeProcess is Unit.KillMode for a unit whose children outlive it.
const KillModeProcess = "process"

// Task is a oneshot that runs when its InputHash changes (apply a manifest,
// load firewall rules).
type Task struct {
	// Name, e.g. kcore-kubernetes-provisioner.
	Name string `json:"name"`
	// Argv is the command line.
	Argv []string `json:"argv"`
	// After lists units or tasks that must be healthy or done first.
	After []string `json:"after,omitempty"`
	// InputHash triggers a re-run when it changes.
	InputHash string `json:"inputHash"`
	// Reason and Inputs are for plans, as on Unit.
	Reason string   `json:"-"`
	Inputs []string `json:"-"`
}

// VolumeOp is a local volume the agent ensures: created, grown, formatted and
// mounted. Only volumes the agent created are ever deleted.
type VolumeOp struct {
	// Name is k8s-<cluster>-<node>-<volume>.
	Name string `json:"name"`
	// Class is lvm, zfs or disk.
	Class string `json:"class"`
	// Pool is the LVM volume group or ZFS pool (empty for a disk).
	Pool string `json:"pool"`
	// Device is /dev/<vg>/<lv>, /dev/zvol/<pool>/<dataset> or, for a disk,
	// /dev/disk/by-id/<name>.
	Device string `json:"device"`
	// SizeBytes is the target size; growing is allowed, shrinking never. For
	// a disk it is the size the node reported: the filesystem grows to the
	// disk whenever the disk grew.
	SizeBytes int64 `json:"sizeBytes"`
	// FSType is ext4 or xfs (empty for a thin pool).
	FSType string `json:"fsType,omitempty"`
	// Role is filesystem or pool.
	Role string `json:"role"`
	// MountPath is where the filesystem is mounted (empty for a pool).
	MountPath string `json:"mountPath,omitempty"`
	// Reason is for plans, as on File.
	Reason string `json:"-"`
}

// NodeReport is what an agent tells the controller after applying a NodeState.
type NodeReport struct {
	// NodeID of the reporting node.
	NodeID string `json:"nodeId"`
	// Cluster the report is about.
	Cluster string `json:"cluster"`
	// ObservedGeneration is the NodeState generation applied.
	ObservedGeneration int64 `json:"observedGeneration"`
	// Items are per-file, per-unit, per-volume and per-task results.
	Items []ItemStatus `json:"items,omitempty"`
}

// Item states.
const (
	ItemOK      = "ok"
	ItemPending = "pending"
	ItemFailed  = "failed"
)

// ItemStatus is one applied item's result.
type ItemStatus struct {
	// Kind is file, unit, volume or task.
	Kind string `json:"kind"`
	// Name is the path or unit, volume or task name.
	Name string `json:"name"`
	// State is ok, pending or failed.
	State string `json:"state"`
	// Message explains a failure.
	Message string `json:"message,omitempty"`
	// Restarts, for a failed unit that crashed after an apply, counts the
	// runtime's restarts of it since that apply, including the one it is
	// waiting to make.
	Restarts int `json:"restarts,omitempty"`
	// Restarting, for a failed unit that crashed after an apply, says the
	// runtime restarts it (or already has); false means it stays down.
	Restarting bool `json:"restarting,omitempty"`
}
