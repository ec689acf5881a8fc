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
		initial = append(initial, n.NodeID+"="+urlFor(n.AdvertiseAddress, EtcdPeerPort))
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
		"--listen-peer-urls=" + urlFor(m.AdvertiseAddress, EtcdPeerPort),
		"--listen-client-urls=" + urlFor(m.AdvertiseAddress, EtcdClientPort) + "," + urlFor("127.0.0.1", EtcdClientPort),
		"--listen-metrics-urls=http://127.0.0.1:" + strconv.Itoa(EtcdMetricsPort),
		"--advertise-client-urls=" + urlFor(m.AdvertiseAddress, EtcdClientPort),
		"--initial-advertise-peer-urls=" + urlFor(m.AdvertiseAddress, EtcdPeerPort),
		"--initial-cluster=" + strings.Join(initial, ","),
		"--initial-cluster-state=" + state,
		"--initial-cluster-token=" + r.c.Metadata.Name,
		"--client-cert-auth=true",
		"--trusted-ca-file=" + pkiPath("etcd/ca.crt"),
		"--cert-file=" + pkiPath("etcd/server.crt"),
		"--key-file=" + pkiPath("etcd/server.key"),
		"--peer-client-cert-auth=true",
		"--peer-trusted-ca-file=" + pkiPath("etcd/ca.crt"),
		"--peer-cert-file=" + pkiPath("etcd/peer.crt"),
		"--peer-key-file=" + pkiPath("etcd/peer.key"),
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
			Name:      UnitEtcd,
			Reason:    "etcd member " + m.NodeID,
			Argv:      argv,
			After:     after,
			Restart:   api.RestartAlways,
			HealthURL: fmt.Sprintf("http://127.0.0.1:%d/health", EtcdMetricsPort),
		},
		reads: []string{
			pkiPath("etcd/ca.crt"), pkiPath("etcd/server.crt"), pkiPath("etcd/server.key"),
			pkiPath("etcd/peer.crt"), pkiPath("etcd/peer.key"),
		},
		hashArgv: hashArgv,
	})
	return nil
}

// apiServer renders kube-apiserver, listening on the endpoint's port. It talks
// to its local etcd member only (etcd listens on 127.0.0.1 and its server
// certificate names 127.0.0.1), as kubeadm's stacked-etcd topology does, so
// adding or removing a control plane leaves its argv alone.
func (r *renderer) apiServer(b *builder, m api.ClusterNode) error {
	argv := r.argv(kubeflags.APIServer, m, kubeflags.Inputs{
		AdvertiseAddress:     m.AdvertiseAddress,
		SecurePort:           r.apiPort,
		EtcdServers:          urlFor("127.0.0.1", EtcdClientPort),
		ServiceAccountIssuer: "https://kubernetes.default.svc." + r.opts.ClusterDomain,
		ServiceCIDR:          r.c.Spec.ServiceCIDR,
	})
	v := r.release(m.NodeID, true)
	b.unit(api.Unit{
		Name:      UnitAPIServer,
		Reason:    "kube-apiserver on " + m.AdvertiseAddress + ":" + strconv.Itoa(r.apiPort),
		Version:   v,
		Argv:      argv,
		After:     []string{UnitEtcd},
		Restart:   api.RestartAlways,
		HealthURL: r.localAPIURL() + "/readyz",
	}, []string{
		pkiPath("ca.crt"), pkiPath("apiserver.crt"), pkiPath("apiserver.key"),
		pkiPath("etcd/ca.crt"), pkiPath("apiserver-etcd-client.crt"), pkiPath("apiserver-etcd-client.key"),
		pkiPath("apiserver-kubelet-client.crt"), pkiPath("apiserver-kubelet-client.key"),
		pkiPath("front-proxy-ca.crt"), pkiPath("front-proxy-client.crt"), pkiPath("front-proxy-client.key"),
		pkiPath("sa.pub"), pkiPath("sa.key"),
	}, append([]string{k8sExtra(v)}, r.etcdGenerationExtra()...)...)
	return nil
}

// controllerManager renders kube-controller-manager: node CIDR allocation from
// clusterCidr, CSR signing with the cluster CA.
func (r *renderer) controllerManager(b *builder, m api.ClusterNode) error {
	kc := ControllerManagerKubeconfigPath
	argv := r.argv(kubeflags.ControllerManager, m, kubeflags.Inputs{
		Kubeconfig:  kc,
		SecurePort:  ControllerManagerPort,
		ClusterName: r.c.Metadata.Name,
		ClusterCIDR: r.c.Spec.ClusterCIDR,
		ServiceCIDR: r.c.Spec.ServiceCIDR,
	})
	v := r.release(m.NodeID, true)
	b.unit(api.Unit{
		Name:      UnitControllerManager,
		Reason:    "kube-controller-manager",
		Version:   v,
		Argv:      argv,
		After:     []string{UnitAPIServer},
		Restart:   api.RestartAlways,
		HealthURL: fmt.Sprintf("https://127.0.0.1:%d/healthz", ControllerManagerPort),
	}, []string{kc, pkiPath("ca.crt"), pkiPath("ca.key"), pkiPath("front-proxy-ca.crt"), pkiPath("sa.key")}, append([]string{k8sExtra(v)}, r.etcdGenerationExtra()...)...)
	return nil
}

// scheduler renders kube-scheduler.
func (r *renderer) scheduler(b *builder, m api.ClusterNode) error {
	kc := SchedulerKubeconfigPath
	v := r.release(m.NodeID, true)
	b.unit(api.Unit{
		Name:      UnitScheduler,
		Reason:    "kube-scheduler",
		Version:   v,
		Argv:      r.argv(kubeflags.Scheduler, m, kubeflags.Inputs{Kubeconfig: kc, SecurePort: SchedulerPort}),
		After:     []string{UnitAPIServer},
		Restart:   api.RestartAlways,
		HealthURL: fmt.Sprintf("https://127.0.0.1:%d/healthz", SchedulerPort),
	}, []string{kc}, append([]string{k8sExtra(v)}, r.etcdGenerationExtra()...)...)
	return nil
}

// argv is component's command line on member m: the flags kcore owns, built
// from in, then the cluster's extraArgs for the component sorted by name.
// Being argv, it is part of the unit's input hash.
func (r *renderer) argv(component string, m api.ClusterNode, in kubeflags.Inputs) []string {
	in.NodeID = m.NodeID
	in.PKI = pkiPath
	return kubeflags.Argv(kubeflags.Binary(component), kubeflags.Build(component, in), r.c.Spec.ExtraArgs(component))
}
