package render

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// kubectlApply is the argv that applies manifests with the admin
// kubeconfig's credentials against the local API server (its certificate
// has 127.0.0.1 among its SANs), not the endpoint admin.conf names: the
// tasks run on a control plane right after its own kube-apiserver is ready,
// when the VIP may not be up yet.
func (r *renderer) kubectlApply(paths ...string) []string {
	var args []string
	for _, p := range paths {
		args = append(args, "-f", p)
	}
	return r.kubectl(append([]string{"apply"}, args...)...)
}

// kubectl is the argv of a kubectl command against the local API server
// with the admin kubeconfig's credentials, as kubectlApply.
func (r *renderer) kubectl(args ...string) []string {
	return append([]string{"kubectl", "--kubeconfig=" + r.l.AdminKubeconfig, "--server=" + r.localAPIURL()}, args...)
}

// ifaces is every member's interface, unique and sorted.
func (r *renderer) ifaces() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range r.c.Spec.Members() {
		iface := n.Iface
		if iface == "" {
			iface = api.DefaultIface
		}
		if !seen[iface] {
			seen[iface] = true
			out = append(out, iface)
		}
	}
	sort.Strings(out)
	return out
}

// The cilium-cli commands the Cilium oneshot runs.
const (
	// CiliumInstall installs Cilium on a cluster that was never ready.
	CiliumInstall = "install"
	// CiliumUpgrade changes the settings of the Cilium a ready cluster
	// runs: cilium install fails on a release that is already installed.
	CiliumUpgrade = "upgrade"
)

// CiliumInstallArgs is the `cilium install` argv for a cluster, with the
// reference's --set flags derived from its spec.
func CiliumInstallArgs(c *api.KubernetesCluster) ([]string, error) {
	r, err := newRenderer(c, &pki.ClusterSecrets{}, nil, Options{})
	if err != nil {
		return nil, err
	}
	return r.ciliumArgs(CiliumInstall), nil
}

// ciliumCommand is CiliumInstall until the cluster was ready once (its
// status says Bootstrapped: the create's cilium install succeeded, since
// ready needs every oneshot done), CiliumUpgrade after. The plan renders
// both sides of an update with the stored status, as the orchestrator does,
// so a planned Cilium change and the unit the node runs name one command.
func (r *renderer) ciliumCommand() string {
	if r.c.Status.Bootstrapped() {
		return CiliumUpgrade
	}
	return CiliumInstall
}

// ciliumArgs is the argv of `cilium install` or `cilium upgrade` with the
// settings as --set flags. An upgrade resets the release's values first
// (--reset-values), so a setting the spec no longer asks for goes back to
// the chart's default instead of lingering, and rolls the agents
// (rollOutCiliumPods), which read their configuration only at start.
func (r *renderer) ciliumArgs(command string) []string {
	argv := []string{"cilium", command, "--namespace", "kube-system"}
	if command == CiliumUpgrade {
		argv = append(argv, "--reset-values", "--set", "rollOutCiliumPods=true")
	}
	for _, s := range r.ciliumSettings() {
		argv = append(argv, "--set", s)
	}
	return argv
}

// ciliumSettings are the reference's --set values derived from the spec.
func (r *renderer) ciliumSettings() []string {
	cs := r.c.Spec.Cilium
	set := []string{"ipam.mode=kubernetes", "kubeProxyReplacement=true", "bpf.masquerade=true"}
	if cs.Mode == "tunnel" {
		proto := cs.Tunnel
		if proto == "" || proto == api.DefaultCiliumTunnel {
			proto = "vxlan"
		}
		set = append(set, "routingMode=tunnel", "tunnelProtocol="+proto)
	} else {
		adr := cs.AutoDirectNodeRoutes == nil || *cs.AutoDirectNodeRoutes
		set = append(set, "routingMode=native", "autoDirectNodeRoutes="+strconv.FormatBool(adr),
			"ipv4NativeRoutingCIDR="+r.c.Spec.ClusterCIDR)
	}
	mtu := cs.MTU
	if mtu == 0 {
		mtu = api.DefaultCiliumMTU
	}
	set = append(set, "mtu="+strconv.Itoa(mtu))
	if len(cs.LoadBalancerIPPools) > 0 {
		set = append(set, "l2announcements.enabled=true")
	}
	set = append(set, "k8sServiceHost="+r.apiHost, "k8sServicePort="+strconv.Itoa(r.apiPort))
	for i, iface := range r.ifaces() {
		set = append(set, fmt.Sprintf("devices[%d]=%s", i, iface))
	}
	return set
}

// ciliumInstall renders, on the bootstrap control plane only, the oneshot
// that installs Cilium (or upgrades it, see ciliumCommand) and, when pools
// are set, the L2 pool and policy and the task that applies them. cilium
// install is not idempotent (a second run finds the release installed and
// fails), so it runs on one node, and its input hash covers only the
// settings and environment: renewing the admin credentials must not re-run
// it, nor must the switch from install to upgrade once the cluster is
// ready, while a changed setting (VIP, MTU, pools) re-runs it.
func (r *renderer) ciliumInstall(b *builder) error {
	command := r.ciliumCommand()
	b.units = append(b.units, pendingUnit{
		unit: api.Unit{
			Name:    r.l.UnitCilium,
			Reason:  "`cilium " + command + "` once the API is ready",
			Argv:    r.ciliumArgs(command),
			Env:     map[string]string{"KUBECONFIG": r.l.AdminKubeconfig},
			After:   []string{r.l.UnitAPIServer},
			Restart: api.RestartOnFailure,
			Oneshot: true,
		},
		hashArgv: r.ciliumArgs(CiliumInstall),
	})
	pools := r.c.Spec.Cilium.LoadBalancerIPPools
	if len(pools) == 0 {
		return nil
	}
	l2, err := manifests.CiliumL2(pools, r.ifaces())
	if err != nil {
		return fmt.Errorf("render cilium l2: %w", err)
	}
	b.file(r.l.CiliumL2, modeConfig, l2, false, "Cilium pool and L2 policy kcore ("+strings.Join(pools, ", ")+")")
	b.task(api.Task{Name: r.l.TaskCiliumL2, Argv: r.kubectlApply(r.l.CiliumL2), After: []string{r.l.UnitCilium, r.l.UnitAPIServer}, Reason: "kubectl apply the Cilium pool and L2 policy"},
		r.l.CiliumL2, r.l.AdminKubeconfig)
	return nil
}
