package render

import (
	"fmt"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render/kubeflags"
)

func urlFor(addr string, port int) string { return fmt.Sprintf("https://%s:%d", addr, port) }

// etcd renders the etcd member of a control plane. Membership is static: every
// control-plane node, the first one bootstrapping; with EtcdClusterExists a
// member joins the running cluster instead. The --initial-* flags are left out
// of the input hash: etcd reads them only on its first start, so a membership
// change does not restart every member. After an etcd restore etcd runs on
// the restored generation's data directory (restore.go), after the oneshot
// that restores it while the restore is in progress.
func (r *renderer) etcd(b *builder, m api.ClusterNode) error {
	initial := make([]string, 0, len(r.c.Spec.ControlPlaneNodes))
	for _, n := range r.c.Spec.ControlPlaneNodes {
		initial = append(initial, n.NodeID+"="+urlFor(n.AdvertiseAddress, r.l.EtcdPeerPort))
	}
	state := "new"
	if r.opts.EtcdClusterExists {
		state = "existing"
	}
	restore, err := r.etcdRestore(b, m, strings.Join(initial, ","))
	if err != nil {
		return err
	}
	argv := []string{
		"etcd",
		"--name=" + m.NodeID,
		"--data-dir=" + r.etcdDataDir(r.etcdGeneration()),
		"--listen-peer-urls=" + urlFor(m.AdvertiseAddress, r.l.EtcdPeerPort),
		"--listen-client-urls=" + urlFor(m.AdvertiseAddress, r.l.EtcdClientPort) + "," + urlFor("127.0.0.1", r.l.EtcdClientPort),
		"--listen-metrics-urls=http://127.0.0.1:" + strconv.Itoa(r.l.EtcdMetricsPort),
		"--advertise-client-urls=" + urlFor(m.AdvertiseAddress, r.l.EtcdClientPort),
		"--initial-advertise-peer-urls=" + urlFor(m.AdvertiseAddress, r.l.EtcdPeerPort),
		"--initial-cluster=" + strings.Join(initial, ","),
		"--initial-cluster-state=" + state,
		"--initial-cluster-token=" + r.c.Metadata.Name,
		"--client-cert-auth=true",
		"--trusted-ca-file=" + r.l.PKI("etcd/ca.crt"),
		"--cert-file=" + r.l.PKI("etcd/server.crt"),
		"--key-file=" + r.l.PKI("etcd/server.key"),
		"--peer-client-cert-auth=true",
		"--peer-trusted-ca-file=" + r.l.PKI("etcd/ca.crt"),
		"--peer-cert-file=" + r.l.PKI("etcd/peer.crt"),
		"--peer-key-file=" + r.l.PKI("etcd/peer.key"),
		"--snapshot-count=10000",
	}
	var hashArgv []string
	for _, a := range argv {
		if !strings.HasPrefix(a, "--initial-") {
			hashArgv = append(hashArgv, a)
		}
	}
	var after []string
	if restore != "" {
		after = []string{restore}
	}
	b.units = append(b.units, pendingUnit{
		unit: api.Unit{
			Name:      r.l.UnitEtcd,
			Reason:    "etcd member " + m.NodeID + r.portsNote(r.l.EtcdClientPort, r.l.EtcdPeerPort),
			Argv:      argv,
			After:     after,
			Restart:   api.RestartAlways,
			HealthURL: fmt.Sprintf("http://127.0.0.1:%d/health", r.l.EtcdMetricsPort),
		},
		reads: []string{
			r.l.PKI("etcd/ca.crt"), r.l.PKI("etcd/server.crt"), r.l.PKI("etcd/server.key"),
			r.l.PKI("etcd/peer.crt"), r.l.PKI("etcd/peer.key"),
		},
		// etcd loads its serving and peer pairs from the files on every
		// handshake; its trusted CA only at start.
		reloads: []string{
			r.l.PKI("etcd/server.crt"), r.l.PKI("etcd/server.key"),
			r.l.PKI("etcd/peer.crt"), r.l.PKI("etcd/peer.key"),
		},
		hashArgv: hashArgv,
	})
	return nil
}

// portsNote names the ports of a unit outside the primary slot, whose
// ports differ from the reference's (nothing in the primary slot).
func (r *renderer) portsNote(ports ...int) string {
	if r.l.Slot == PrimarySlot {
		return ""
	}
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return " (slot " + strconv.Itoa(r.l.Slot) + ", ports " + strings.Join(s, ", ") + ")"
}

// apiServer renders kube-apiserver, listening on the endpoint's port. It talks
// to its local etcd member only (etcd listens on 127.0.0.1 and its server
// certificate names 127.0.0.1), as kubeadm's stacked-etcd topology does, so
// adding or removing a control plane leaves its argv alone.
func (r *renderer) apiServer(b *builder, m api.ClusterNode) error {
	argv := r.argv(kubeflags.APIServer, m, kubeflags.Inputs{
		AdvertiseAddress:     m.AdvertiseAddress,
		SecurePort:           r.apiPort,
		EtcdServers:          urlFor("127.0.0.1", r.l.EtcdClientPort),
		ServiceAccountIssuer: "https://kubernetes.default.svc." + r.opts.ClusterDomain,
		ServiceCIDR:          r.c.Spec.ServiceCIDR,
	})
	v := r.release(m.NodeID, true)
	b.unit(api.Unit{
		Name:      r.l.UnitAPIServer,
		Reason:    "kube-apiserver on " + m.AdvertiseAddress + ":" + strconv.Itoa(r.apiPort),
		Version:   v,
		Argv:      argv,
		After:     []string{r.l.UnitEtcd},
		Restart:   api.RestartAlways,
		HealthURL: r.localAPIURL() + "/readyz",
	}, []string{
		r.l.PKI("ca.crt"), r.l.PKI("apiserver.crt"), r.l.PKI("apiserver.key"),
		r.l.PKI("etcd/ca.crt"), r.l.PKI("apiserver-etcd-client.crt"), r.l.PKI("apiserver-etcd-client.key"),
		r.l.PKI("apiserver-kubelet-client.crt"), r.l.PKI("apiserver-kubelet-client.key"),
		r.l.PKI("front-proxy-ca.crt"), r.l.PKI("front-proxy-client.crt"), r.l.PKI("front-proxy-client.key"),
		r.l.PKI("sa.pub"), r.l.PKI("sa.key"),
	}, append([]string{k8sExtra(v)}, r.etcdGenerationExtra()...)...)
	// kube-apiserver reloads its serving pair and its client pairs
	// (towards etcd, kubelets and aggregated APIs) from the files; its CA
	// bundles and service-account keys are hashed whole.
	b.reloading(
		r.l.PKI("apiserver.crt"), r.l.PKI("apiserver.key"),
		r.l.PKI("apiserver-etcd-client.crt"), r.l.PKI("apiserver-etcd-client.key"),
		r.l.PKI("apiserver-kubelet-client.crt"), r.l.PKI("apiserver-kubelet-client.key"),
		r.l.PKI("front-proxy-client.crt"), r.l.PKI("front-proxy-client.key"),
	)
	return nil
}

// controllerManager renders kube-controller-manager: node CIDR allocation from
// clusterCidr, CSR signing with the cluster CA.
func (r *renderer) controllerManager(b *builder, m api.ClusterNode) error {
	kc := r.l.ControllerManagerKubeconfig
	argv := r.argv(kubeflags.ControllerManager, m, kubeflags.Inputs{
		Kubeconfig:  kc,
		SecurePort:  r.l.ControllerManagerPort,
		ClusterName: r.c.Metadata.Name,
		ClusterCIDR: r.c.Spec.ClusterCIDR,
		ServiceCIDR: r.c.Spec.ServiceCIDR,
	})
	v := r.release(m.NodeID, true)
	b.unit(api.Unit{
		Name:      r.l.UnitControllerManager,
		Reason:    "kube-controller-manager" + r.portsNote(r.l.ControllerManagerPort),
		Version:   v,
		Argv:      argv,
		After:     []string{r.l.UnitAPIServer},
		Restart:   api.RestartAlways,
		HealthURL: fmt.Sprintf("https://127.0.0.1:%d/healthz", r.l.ControllerManagerPort),
	}, []string{kc, r.l.PKI("ca.crt"), r.l.PKI("signing-ca.crt"), r.l.PKI("ca.key"), r.l.PKI("front-proxy-ca.crt"), r.l.PKI("sa.key"),
		r.l.PKI(ControllerManagerClientPair + ".crt"), r.l.PKI(ControllerManagerClientPair + ".key"),
	}, append([]string{k8sExtra(v)}, r.etcdGenerationExtra()...)...)
	// Its kubeconfig names its client pair by path: client-go reloads it.
	b.reloading(r.l.PKI(ControllerManagerClientPair+".crt"), r.l.PKI(ControllerManagerClientPair+".key"))
	return nil
}

// scheduler renders kube-scheduler.
func (r *renderer) scheduler(b *builder, m api.ClusterNode) error {
	kc := r.l.SchedulerKubeconfig
	v := r.release(m.NodeID, true)
	b.unit(api.Unit{
		Name:      r.l.UnitScheduler,
		Reason:    "kube-scheduler" + r.portsNote(r.l.SchedulerPort),
		Version:   v,
		Argv:      r.argv(kubeflags.Scheduler, m, kubeflags.Inputs{Kubeconfig: kc, SecurePort: r.l.SchedulerPort}),
		After:     []string{r.l.UnitAPIServer},
		Restart:   api.RestartAlways,
		HealthURL: fmt.Sprintf("https://127.0.0.1:%d/healthz", r.l.SchedulerPort),
	}, []string{kc, r.l.PKI("ca.crt"), r.l.PKI(SchedulerClientPair + ".crt"), r.l.PKI(SchedulerClientPair + ".key")},
		append([]string{k8sExtra(v)}, r.etcdGenerationExtra()...)...)
	// Its kubeconfig names its client pair by path: client-go reloads it.
	b.reloading(r.l.PKI(SchedulerClientPair+".crt"), r.l.PKI(SchedulerClientPair+".key"))
	return nil
}

// argv is component's command line on member m: the flags kcore owns, built
// from in, then the cluster's extraArgs for the component sorted by name.
// Being argv, it is part of the unit's input hash.
func (r *renderer) argv(component string, m api.ClusterNode, in kubeflags.Inputs) []string {
	in.NodeID = m.NodeID
	in.PKI = r.l.PKI
	return kubeflags.Argv(kubeflags.Binary(component), kubeflags.Build(component, in), r.c.Spec.ExtraArgs(component))
}
