// Package kubeflags builds the command-line flags kcore renders for
// kube-apiserver, kube-controller-manager, kube-scheduler and kubelet, and
// appends a cluster's extraArgs to them. It is the one place that knows
// which flags kcore owns: pkg/render builds every unit's argv with it, and
// pkg/api validates spec.*.extraArgs against Owned, so a flag kcore starts
// setting is refused as an extra argument at once.
package kubeflags

import (
	"slices"
	"sort"
	"strconv"
)

// Components whose argv takes extraArgs, named as their spec fields.
const (
	APIServer         = "apiServer"
	ControllerManager = "controllerManager"
	Scheduler         = "scheduler"
	Kubelet           = "kubelet"
)

// Components lists every component that takes extraArgs, in spec order.
func Components() []string {
	return []string{APIServer, ControllerManager, Scheduler, Kubelet}
}

// Binary is the program a component runs.
func Binary(component string) string {
	switch component {
	case APIServer:
		return "kube-apiserver"
	case ControllerManager:
		return "kube-controller-manager"
	case Scheduler:
		return "kube-scheduler"
	case Kubelet:
		return "kubelet"
	}
	return ""
}

// Flag is one --name=value argument.
type Flag struct {
	Name, Value string
}

// Inputs are the values a component's flags are built from.
type Inputs struct {
	// NodeID and AdvertiseAddress are the member's.
	NodeID, AdvertiseAddress string
	// ClusterName, ClusterCIDR and ServiceCIDR are the cluster's.
	ClusterName, ClusterCIDR, ServiceCIDR string
	// ServiceAccountIssuer is the issuer URL of service-account tokens.
	ServiceAccountIssuer string
	// EtcdServers is the etcd client URL of kube-apiserver.
	EtcdServers string
	// SecurePort is the component's HTTPS port.
	SecurePort int
	// PKI maps a file name under the PKI directory to its path.
	PKI func(name string) string
	// Kubeconfig is the component's kubeconfig.
	Kubeconfig string
	// KubeletConfig and KubeletRootDir are the kubelet's config file and root.
	KubeletConfig, KubeletRootDir string
	// Taint registers the kubelet with the control-plane NoSchedule taint.
	Taint bool
}

// Build returns component's flags from in, in the order kcore renders them.
func Build(component string, in Inputs) []Flag {
	pki := in.PKI
	if pki == nil {
		pki = func(n string) string { return n }
	}
	f := func(kv ...string) []Flag {
		out := make([]Flag, 0, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, Flag{kv[i], kv[i+1]})
		}
		return out
	}
	port := strconv.Itoa(in.SecurePort)
	switch component {
	case APIServer:
		return f(
			"advertise-address", in.AdvertiseAddress,
			"secure-port", port,
			"allow-privileged", "true",
			"authorization-mode", "Node,RBAC",
			"enable-admission-plugins", "NodeRestriction",
			"anonymous-auth", "true",
			"client-ca-file", pki("ca.crt"),
			"tls-cert-file", pki("apiserver.crt"),
			"tls-private-key-file", pki("apiserver.key"),
			"etcd-servers", in.EtcdServers,
			"etcd-cafile", pki("etcd/ca.crt"),
			"etcd-certfile", pki("apiserver-etcd-client.crt"),
			"etcd-keyfile", pki("apiserver-etcd-client.key"),
			"kubelet-client-certificate", pki("apiserver-kubelet-client.crt"),
			"kubelet-client-key", pki("apiserver-kubelet-client.key"),
			"kubelet-certificate-authority", pki("ca.crt"),
			"kubelet-preferred-address-types", "InternalIP,Hostname",
			"proxy-client-cert-file", pki("front-proxy-client.crt"),
			"proxy-client-key-file", pki("front-proxy-client.key"),
			"requestheader-client-ca-file", pki("front-proxy-ca.crt"),
			"requestheader-allowed-names", "front-proxy-client",
			"requestheader-extra-headers-prefix", "X-Remote-Extra-",
			"requestheader-group-headers", "X-Remote-Group",
			"requestheader-username-headers", "X-Remote-User",
			"service-account-issuer", in.ServiceAccountIssuer,
			"service-account-key-file", pki("sa.pub"),
			"service-account-signing-key-file", pki("sa.key"),
			"service-cluster-ip-range", in.ServiceCIDR,
			// On SIGTERM, answer new requests 429 until the ones in
			// flight are done, then close the server within 2 s; without
			// it, open watches hold the process up to its 60 s shutdown
			// timeout, and a restart waits out the supervisor's grace.
			"shutdown-send-retry-after", "true",
		)
	case ControllerManager:
		return f(
			"kubeconfig", in.Kubeconfig,
			"authentication-kubeconfig", in.Kubeconfig,
			"authorization-kubeconfig", in.Kubeconfig,
			"bind-address", "127.0.0.1",
			"secure-port", port,
			"leader-elect", "true",
			"cluster-name", in.ClusterName,
			"allocate-node-cidrs", "true",
			"cluster-cidr", in.ClusterCIDR,
			"node-cidr-mask-size", "24",
			"service-cluster-ip-range", in.ServiceCIDR,
			"client-ca-file", pki("ca.crt"),
			"requestheader-client-ca-file", pki("front-proxy-ca.crt"),
			"root-ca-file", pki("ca.crt"),
			"cluster-signing-cert-file", pki("signing-ca.crt"),
			"cluster-signing-key-file", pki("ca.key"),
			"service-account-private-key-file", pki("sa.key"),
			"use-service-account-credentials", "true",
			"controllers", "*,bootstrapsigner,tokencleaner",
		)
	case Scheduler:
		return f(
			"kubeconfig", in.Kubeconfig,
			"authentication-kubeconfig", in.Kubeconfig,
			"authorization-kubeconfig", in.Kubeconfig,
			"bind-address", "127.0.0.1",
			"secure-port", port,
			"leader-elect", "true",
		)
	case Kubelet:
		out := f(
			"config", in.KubeletConfig,
			"kubeconfig", in.Kubeconfig,
			"root-dir", in.KubeletRootDir,
			"hostname-override", in.NodeID,
			"node-ip", in.AdvertiseAddress,
		)
		if in.Taint {
			out = append(out, Flag{"register-with-taints", "node-role.kubernetes.io/control-plane:NoSchedule"})
		}
		return out
	}
	return nil
}

// Owned are the flag names kcore sets for component, sorted: every flag
// Build can return for it and, for the kubelet, the flag of every
// KubeletConfiguration field KubeletConfig writes (a flag overrides the
// file).
func Owned(component string) []string {
	var names []string
	for _, fl := range Build(component, Inputs{Taint: true}) {
		names = append(names, fl.Name)
	}
	if component == Kubelet {
		for _, f := range KubeletConfig(KubeletConfigInputs{Lab: true}) {
			if f.Flag != "" {
				names = append(names, f.Flag)
			}
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// IsOwned reports whether kcore sets flag name for component.
func IsOwned(component, name string) bool {
	_, ok := slices.BinarySearch(Owned(component), name)
	return ok
}

// Argv is binary followed by flags as --name=value, in their order, then
// extra (the cluster's extraArgs) as --name=value sorted by name, so the
// same map always renders the same argv.
func Argv(binary string, flags []Flag, extra map[string]string) []string {
	argv := make([]string, 0, 1+len(flags)+len(extra))
	argv = append(argv, binary)
	for _, fl := range flags {
		argv = append(argv, "--"+fl.Name+"="+fl.Value)
	}
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		argv = append(argv, "--"+n+"="+extra[n])
	}
	return argv
}
