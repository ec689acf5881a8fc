package render

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// Sentinel errors.
var (
	// ErrInvalid is returned for a cluster or options Render cannot use.
	ErrInvalid = errors.New("invalid render input")
	// ErrMissingSecret is returned when secrets lack a node's certificates
	// (call ClusterSecrets.Ensure first).
	ErrMissingSecret = errors.New("missing secret")
	// ErrNoStorageBackend is returned when a volume names no volume group and
	// the node reported no storage backend of its class (yet).
	ErrNoStorageBackend = errors.New("no storage backend")
)

// renderer holds what every node's render shares.
type renderer struct {
	c     *api.KubernetesCluster
	s     *pki.ClusterSecrets
	nodes map[string]*api.Node
	opts  Options
	// l is the cluster's layout: every name and port it renders.
	l       Layout
	apiHost string
	apiPort int
	cilium  bool
	bridge  bool
	ha      bool
	cpIndex map[string]int
	// podCIDRs is each member's pod /24 in bridge mode, by node id.
	podCIDRs map[string]string
	// certs is what pki issues, by slot name, for the items' reasons.
	certs map[string]pki.IssuedCert
}

// Render returns the NodeState of every member of c, keyed by node id. c must
// be defaulted and valid, secrets must cover it (pki.ClusterSecrets.Ensure),
// nodes holds the facts reported so far (nil or missing entries are fine
// unless a volume needs its storage backend). Generation is left 0 for the
// caller to set; see Hash.
func Render(c *api.KubernetesCluster, secrets *pki.ClusterSecrets, nodes map[string]*api.Node, opts Options) (map[string]*api.NodeState, error) {
	r, err := newRenderer(c, secrets, nodes, opts)
	if err != nil {
		return nil, err
	}
	out := map[string]*api.NodeState{}
	for _, m := range c.Spec.Members() {
		ns, err := r.node(m)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", m.NodeID, err)
		}
		out[m.NodeID] = ns
	}
	return out, nil
}

func newRenderer(c *api.KubernetesCluster, secrets *pki.ClusterSecrets, nodes map[string]*api.Node, opts Options) (*renderer, error) {
	if c == nil || secrets == nil {
		return nil, fmt.Errorf("render: cluster and secrets are required: %w", ErrInvalid)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &c.Spec
	if len(s.ControlPlaneNodes) == 0 {
		return nil, fmt.Errorf("render: no control-plane nodes: %w", ErrInvalid)
	}
	host, portStr, err := net.SplitHostPort(s.APIServerEndpoint)
	if err != nil {
		return nil, fmt.Errorf("render: apiServerEndpoint %q: %w", s.APIServerEndpoint, ErrInvalid)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("render: apiServerEndpoint port %q: %w", portStr, ErrInvalid)
	}
	l, err := LayoutFor(c.Metadata.Name, c.Status.Slot)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	r := &renderer{
		c: c, s: secrets, nodes: nodes, opts: o, l: l,
		apiHost: host, apiPort: port,
		cilium:  s.CNI == api.CNICilium && portStr == api.PrimaryAPIPort,
		bridge:  s.CNI == api.CNIBridge || portStr != api.PrimaryAPIPort,
		ha:      s.HighAvailability.Enabled,
		cpIndex: map[string]int{},
	}
	for i, n := range s.ControlPlaneNodes {
		r.cpIndex[n.NodeID] = i
	}
	if r.certs, err = describeCerts(c); err != nil {
		return nil, err
	}
	if r.bridge {
		if r.podCIDRs, err = podCIDRs(s); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// node renders one member.
func (r *renderer) node(m api.ClusterNode) (*api.NodeState, error) {
	b := newBuilder(r.l, m.NodeID)
	cpi, isCP := r.cpIndex[m.NodeID]
	steps := []func() error{func() error { return r.nodePKI(b, m) }}
	if isCP {
		steps = append(steps,
			func() error { return r.controlPlanePKI(b, m) },
			func() error { return r.etcd(b, m) },
			func() error { r.etcdBackup(b); return nil },
			func() error { return r.apiServer(b, m) },
			func() error { return r.controllerManager(b, m) },
			func() error { return r.scheduler(b, m) },
		)
		if r.ha && !r.c.Status.Pins[m.NodeID].VIPReleased {
			steps = append(steps, func() error { return r.keepalived(b, m) })
		}
		if r.ha {
			steps = append(steps, func() error { return r.firewall(b) })
		}
	}
	// containerd serves the kubelet: a machine runs one, for the one
	// cluster whose kubelet runs there.
	kubelet := r.runsKubelet(m.NodeID)
	if kubelet {
		steps = append(steps, func() error { return r.containerd(b) }, func() error { return r.kubelet(b, m, isCP) })
	}
	if r.bridge && kubelet {
		steps = append(steps, func() error { return r.bridgeCNI(b, m) })
	}
	if isCP && cpi == 0 {
		steps = append(steps, func() error { return r.addons(b) })
		if r.cilium {
			steps = append(steps, func() error { return r.ciliumInstall(b) })
		}
		steps = append(steps, func() error { return r.provisioner(b) })
	}
	steps = append(steps, func() error { return r.volumes(b, m) })
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return b.finish()
}

// runsKubelet reports whether member id runs this cluster's kubelet: not on
// a machine another cluster used when it joined (ClusterStatus.Shared, see
// Place), where it runs its control plane only.
func (r *renderer) runsKubelet(id string) bool {
	return !slices.Contains(r.c.Status.Shared, id)
}

// endpointURL is https://<apiServerEndpoint>.
func (r *renderer) endpointURL() string {
	return "https://" + net.JoinHostPort(r.apiHost, strconv.Itoa(r.apiPort))
}

// nodeAPIURL is the API server node id's kubelet and kube-proxy talk to.
// On a control plane it is the one beside them, as kubeadm's control-plane
// kubelet local mode does: the node registers as soon as its own API server
// serves, not once keepalived has elected a VIP holder (its health check's
// rise and VRRP's master-down interval, seconds after the API servers are
// ready), and a control plane's node traffic never crosses to another node.
// Elsewhere it is the cluster endpoint.
func (r *renderer) nodeAPIURL(id string) string {
	if _, isCP := r.cpIndex[id]; isCP {
		return r.localAPIURL()
	}
	return r.endpointURL()
}

// localAPIURL is https://127.0.0.1:<port>.
func (r *renderer) localAPIURL() string {
	return "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(r.apiPort))
}

// k8sExtra is the extra hash input of a Kubernetes binary's unit running
// release v, so a new release restarts the unit.
func k8sExtra(v string) string { return "kubernetes-version=" + v }

// release is the Kubernetes release node id's components run: the node's
// rollout pin (control-plane components or the kubelet), else the
// cluster's recorded release, else Options.KubernetesVersion.
func (r *renderer) release(id string, controlPlane bool) string {
	v := r.c.Status.Release(id, controlPlane)
	if v == "" {
		v = r.opts.KubernetesVersion
	}
	return v
}
