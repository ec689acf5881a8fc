package render

import (
	"fmt"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
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
	s := &r.c.Spec
	argv := []string{
		"kube-apiserver",
		"--advertise-address=" + m.AdvertiseAddress,
		"--secure-port=" + strconv.Itoa(r.apiPort),
		"--allow-privileged=true",
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--anonymous-auth=true",
		"--client-ca-file=" + pkiPath("ca.crt"),
		"--tls-cert-file=" + pkiPath("apiserver.crt"),
		"--tls-private-key-file=" + pkiPath("apiserver.key"),
		"--etcd-servers=" + urlFor("127.0.0.1", EtcdClientPort),
		"--etcd-cafile=" + pkiPath("etcd/ca.crt"),
		"--etcd-certfile=" + pkiPath("apiserver-etcd-client.crt"),
		"--etcd-keyfile=" + pkiPath("apiserver-etcd-client.key"),
		"--kubelet-client-certificate=" + pkiPath("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + pkiPath("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority=" + pkiPath("ca.crt"),
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--proxy-client-cert-file=" + pkiPath("front-proxy-client.crt"),
		"--proxy-client-key-file=" + pkiPath("front-proxy-client.key"),
		"--requestheader-client-ca-file=" + pkiPath("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--service-account-issuer=https://kubernetes.default.svc." + r.opts.ClusterDomain,
		"--service-account-key-file=" + pkiPath("sa.pub"),
		"--service-account-signing-key-file=" + pkiPath("sa.key"),
		"--service-cluster-ip-range=" + s.ServiceCIDR,
	}
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
	s := &r.c.Spec
	kc := ControllerManagerKubeconfigPath
	argv := []string{
		"kube-controller-manager",
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ControllerManagerPort),
		"--leader-elect=true",
		"--cluster-name=" + r.c.Metadata.Name,
		"--allocate-node-cidrs=true",
		"--cluster-cidr=" + s.ClusterCIDR,
		"--node-cidr-mask-size=24",
		"--service-cluster-ip-range=" + s.ServiceCIDR,
		"--client-ca-file=" + pkiPath("ca.crt"),
		"--requestheader-client-ca-file=" + pkiPath("front-proxy-ca.crt"),
		"--root-ca-file=" + pkiPath("ca.crt"),
		"--cluster-signing-cert-file=" + pkiPath("ca.crt"),
		"--cluster-signing-key-file=" + pkiPath("ca.key"),
		"--service-account-private-key-file=" + pkiPath("sa.key"),
		"--use-service-account-credentials=true",
		"--controllers=*,bootstrapsigner,tokencleaner",
	}
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
		Name:    UnitScheduler,
		Reason:  "kube-scheduler",
		Version: v,
		Argv: []string{
			"kube-scheduler",
			"--kubeconfig=" + kc,
			"--authentication-kubeconfig=" + kc,
			"--authorization-kubeconfig=" + kc,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(SchedulerPort),
			"--leader-elect=true",
		},
		After:     []string{UnitAPIServer},
		Restart:   api.RestartAlways,
		HealthURL: fmt.Sprintf("https://127.0.0.1:%d/healthz", SchedulerPort),
	}, []string{kc}, append([]string{k8sExtra(v)}, r.etcdGenerationExtra()...)...)
	return nil
}
