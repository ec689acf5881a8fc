package render

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

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

// CiliumRelease is the Helm release Cilium is installed as, in
// CiliumNamespace (the names cilium-cli gives it).
const (
	CiliumRelease   = "cilium"
	CiliumNamespace = "kube-system"
)

// CiliumArgs is the argv of the Cilium oneshot the bootstrap control plane
// of c runs (ciliumArgs), for tests that run it against an API server of
// their own.
func CiliumArgs(c *api.KubernetesCluster) ([]string, error) {
	r, err := newRenderer(c, &pki.ClusterSecrets{}, nil, Options{})
	if err != nil {
		return nil, err
	}
	return r.ciliumArgs(), nil
}

// CiliumInstallTimeout bounds how long the Cilium oneshot waits for what
// it installed or changed to be ready (helm --timeout).
const CiliumInstallTimeout = "10m"

// ciliumArgs is `helm upgrade --install` of Cilium's chart, with the admin
// kubeconfig's credentials against the local API server (as kubectl's
// tasks). One command serves the first install and every later change: it
// installs the release when there is none and upgrades it in place
// otherwise, so a rerun (a changed setting, a node that ran it before)
// never fails on a release that exists. --reset-values starts from the
// chart's defaults each time, so a setting the spec no longer asks for
// goes back to the default instead of lingering, and rollOutCiliumPods
// restarts the agents when their configuration changes (they read it only
// at start). --wait ends the oneshot only once the agents and operator
// are ready (rolled, after a change): then Cilium's CRDs exist, which the
// agents wait for, so the task applying the L2 pool after it does not
// fail on a kind the API server does not know yet.
func (r *renderer) ciliumArgs() []string {
	argv := []string{"helm", "upgrade", "--install", CiliumRelease, CiliumChartDir,
		"--namespace", CiliumNamespace,
		"--kubeconfig=" + r.l.AdminKubeconfig, "--kube-apiserver=" + r.localAPIURL(),
		"--wait", "--timeout=" + CiliumInstallTimeout,
		"--reset-values", "--set", "rollOutCiliumPods=true"}
	for _, s := range r.ciliumSettings() {
		argv = append(argv, "--set", s)
	}
	return argv
}

// Names of the workloads Cilium's chart creates, as the chart renders them
// (TestCiliumWorkloadsAreTheChart checks them): the agent's DaemonSet and the
// operator's Deployment.
const (
	CiliumAgentDaemonSet     = "cilium"
	CiliumOperatorDeployment = "cilium-operator"
)

// CiliumWorkloads are the DaemonSet and Deployment Cilium runs as, with
// the labels that select their pods, for health checks (Replicas 0: the
// chart, not kcore, sets the operator's count). A cluster runs them when
// its render has the Cilium oneshot (Layout.UnitCilium).
func CiliumWorkloads() []manifests.Workload {
	return []manifests.Workload{
		{Kind: manifests.KindDaemonSet, Namespace: CiliumNamespace, Name: CiliumAgentDaemonSet, MatchLabels: map[string]string{"k8s-app": "cilium"}},
		{Kind: manifests.KindDeployment, Namespace: CiliumNamespace, Name: CiliumOperatorDeployment,
			MatchLabels: map[string]string{"io.cilium/app": "operator", "name": "cilium-operator"}},
	}
}

// ciliumHelmEnv points Helm's cache, configuration and data at the node's
// run directory: the oneshot has no home directory, and the chart is local,
// so no run needs what an earlier one left there.
func (r *renderer) ciliumHelmEnv() map[string]string {
	dir := path.Join(r.opts.RunDir, "helm")
	return map[string]string{
		"HELM_CACHE_HOME":  path.Join(dir, "cache"),
		"HELM_CONFIG_HOME": path.Join(dir, "config"),
		"HELM_DATA_HOME":   path.Join(dir, "data"),
	}
}

// ciliumSettings are the chart values derived from the spec: the
// reference's, with the MTU under the chart's own key (MTU; the chart has
// no mtu value, so the reference's mtu=1500 would be ignored).
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
	set = append(set, "MTU="+strconv.Itoa(mtu))
	if len(cs.LoadBalancerIPPools) > 0 {
		set = append(set, "l2announcements.enabled=true")
	}
	set = append(set, "k8sServiceHost="+r.apiHost, "k8sServicePort="+strconv.Itoa(r.apiPort))
	if n := r.spreadReplicas(); n < 2 {
		// The chart's default is two operators on different nodes
		// (required anti-affinity).
		set = append(set, "operator.replicas="+strconv.Itoa(n))
	}
	for i, iface := range r.ifaces() {
		set = append(set, fmt.Sprintf("devices[%d]=%s", i, iface))
	}
	if r.opts.Profile == ProfileLab {
		for _, l := range CiliumLabSettings {
			set = append(set, l.Set)
		}
	}
	return set
}

// CiliumLabSetting is a chart value the lab profile sets beyond the
// spec's, and why.
type CiliumLabSetting struct{ Set, Why string }

// CiliumLabSettings are where the lab profile departs from the chart's
// defaults, each for a reason of the lab's machines (network and mount
// namespaces on one host) rather than of Cilium. docs/lab.md's table is
// generated from them.
var CiliumLabSettings = []CiliumLabSetting{
	{"envoy.enabled=false", "Envoy is not a Go program and cannot be built here, so it has no image in the lab"},
	{"l7Proxy=false", "without Envoy there is no L7 proxy"},
	{"cgroup.autoMount.enabled=false", "the init container would enter PID 1's namespaces and mount cgroup2 on the host; a lab machine mounts its own cgroup2 root at the chart's cgroup.hostRoot"},
	{"sysctlfix.enabled=false", "the init container would enter PID 1's mount namespace and write the host's /etc/sysctl.d"},
	{"socketLB.hostNamespaceOnly=true", "a lab machine's cgroup2 root holds its own daemons, but runc puts its pods' processes outside it (under /k8s.io in the host's cgroup2 tree, this cgroup v1 host's unified one), where the socket load balancer attached to that root never sees them: pods' Service traffic is translated per packet at their interface instead, as Cilium does for Istio or KubeVirt"},
	{"securityContext.capabilities.ciliumAgent={CHOWN,KILL,NET_ADMIN,NET_RAW,IPC_LOCK,SYS_MODULE,SYS_ADMIN,DAC_OVERRIDE,FOWNER,SETGID,SETUID,SYSLOG}",
		"the chart's list without SYS_RESOURCE, which the lab's host lacks: runc cannot grant it, so no agent would start"},
	{"securityContext.capabilities.cleanCiliumState={NET_ADMIN,SYS_MODULE,SYS_ADMIN}", "the chart's list without SYS_RESOURCE, as for the agent"},
}

// ciliumInstall renders, on the bootstrap control plane only, the oneshot
// that installs or upgrades Cilium (ciliumArgs) and, when pools are set, the
// L2 pool and policy and the task that applies them. Its input hash covers
// the settings, not the admin credentials: renewing them must not re-run it,
// while a changed setting (VIP, MTU, pools) does.
func (r *renderer) ciliumInstall(b *builder) error {
	b.units = append(b.units, pendingUnit{unit: api.Unit{
		Name:    r.l.UnitCilium,
		Reason:  "`helm upgrade --install` Cilium's chart once the API is ready",
		Argv:    r.ciliumArgs(),
		Env:     r.ciliumHelmEnv(),
		After:   []string{r.l.UnitAPIServer},
		Restart: api.RestartOnFailure,
		Oneshot: true,
	}})
	pools := r.c.Spec.Cilium.LoadBalancerIPPools
	if len(pools) == 0 {
		return nil
	}
	l2, err := manifests.CiliumL2(pools, r.ifaces())
	if err != nil {
		return fmt.Errorf("render cilium l2: %w", err)
	}
	b.file(r.l.CiliumL2, modeConfig, l2, false, "Cilium pool and L2 policy kcore ("+strings.Join(pools, ", ")+")")
	b.task(api.Task{Name: r.l.TaskCiliumL2, Argv: r.kubectlApply(r.l.CiliumL2), After: []string{r.l.UnitCilium, r.l.UnitAPIServer}, Reason: "kubectl apply the Cilium pool and L2 policy" + serverSideReason},
		r.l.CiliumL2, r.l.AdminKubeconfig)
	return nil
}
