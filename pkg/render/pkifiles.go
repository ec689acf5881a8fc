package render

import (
	"fmt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// File modes.
const (
	modeKey    = 0o600
	modeCert   = 0o644
	modeConfig = 0o644
)

// Client pairs of the components that authenticate to kube-apiserver with
// a kubeconfig, written under the PKI directory as NAME.crt and NAME.key.
// Their kubeconfigs name the files instead of embedding them, so client-go
// reloads a renewed pair and the unit's input hash covers only the
// certificate's identity (builder.reloading).
const (
	KubeletClientPair           = "kubelet-client"
	ControllerManagerClientPair = "controller-manager-client"
	SchedulerClientPair         = "scheduler-client"
	KubeProxyClientPair         = "kube-proxy-client"
)

// keyPair writes name.crt (0644) and name.key (0600) under the PKI
// directory; reason describes the certificate.
func (b *builder) keyPair(name string, kp pki.KeyPair, reason string) {
	b.file(b.layout.PKI(name+".crt"), modeCert, string(kp.CertPEM), false, reason)
	b.file(b.layout.PKI(name+".key"), modeKey, string(kp.KeyPEM), true, "private key of "+name+".crt")
}

// nodePKI writes what every member holds: the cluster CA certificate, its
// kubelet serving pair and kubelet kubeconfig (server = the API endpoint);
// a member that runs no kubelet (runsKubelet) holds the CA certificate only.
func (r *renderer) nodePKI(b *builder, m api.ClusterNode) error {
	ns := r.s.Nodes[m.NodeID]
	if ns == nil || len(ns.KubeletClient.CertPEM) == 0 || len(ns.KubeletServing.CertPEM) == 0 {
		return fmt.Errorf("render kubelet pki: node %s: %w", m.NodeID, ErrMissingSecret)
	}
	if len(r.s.CA.CertPEM) == 0 {
		return fmt.Errorf("render kubelet pki: cluster ca: %w", ErrMissingSecret)
	}
	nodes := "nodes/" + m.NodeID + "/"
	b.file(r.l.PKI("ca.crt"), modeCert, string(r.s.ClusterTrust()), false, r.trustReason("cluster CA certificate"))
	if !r.runsKubelet(m.NodeID) {
		return nil
	}
	b.keyPair("kubelet", ns.KubeletServing, r.certReason("kubelet serving certificate", nodes+"kubeletServing"))
	b.keyPair(KubeletClientPair, ns.KubeletClient, r.certReason("kubelet client certificate", nodes+"kubeletClient"))
	server := r.nodeAPIURL(m.NodeID)
	b.file(r.l.KubeletKubeconfig, modeKey, r.kubeconfigFiles(server, "system:node:"+m.NodeID, KubeletClientPair), true,
		kubeconfigReason("kubelet", "system:node:"+m.NodeID, server))
	if r.bridge {
		if len(ns.KubeProxy.CertPEM) == 0 {
			return fmt.Errorf("render kube-proxy pki: node %s: %w", m.NodeID, ErrMissingSecret)
		}
		b.keyPair(KubeProxyClientPair, ns.KubeProxy, r.certReason("kube-proxy client certificate", nodes+"kubeProxy"))
		b.file(r.l.KubeProxyKubeconfig, modeKey, r.kubeconfigFiles(server, pki.KubeProxyCommonName, KubeProxyClientPair), true,
			kubeconfigReason("kube-proxy", pki.KubeProxyCommonName, server))
	}
	return nil
}

// controlPlanePKI writes a control plane's certificates, the cluster signing
// keys and the admin, controller-manager and scheduler kubeconfigs.
func (r *renderer) controlPlanePKI(b *builder, m api.ClusterNode) error {
	cp := r.s.ControlPlanes[m.NodeID]
	if cp == nil || len(cp.APIServer.CertPEM) == 0 || len(cp.EtcdServer.CertPEM) == 0 {
		return fmt.Errorf("render control-plane pki: node %s: %w", m.NodeID, ErrMissingSecret)
	}
	s := r.s
	p := "controlPlanes/" + m.NodeID + "/"
	b.file(r.l.PKI("ca.key"), modeKey, string(s.CA.KeyPEM), true, "cluster CA key")
	b.file(r.l.PKI("signing-ca.crt"), modeCert, string(s.CA.CertPEM), false,
		"cluster CA certificate alone, for kube-controller-manager's CSR signer (ca.crt may hold two)")
	b.file(r.l.PKI("front-proxy-ca.crt"), modeCert, string(s.FrontProxyTrust()), false, r.trustReason("front-proxy CA certificate"))
	b.keyPair("front-proxy-client", s.FrontProxyClient, r.certReason("aggregation-layer client certificate", "frontProxyClient"))
	b.file(r.l.PKI("sa.pub"), modeCert, string(s.ServiceAccount.CertPEM), false, "service-account public key")
	b.file(r.l.PKI("sa.key"), modeKey, string(s.ServiceAccount.KeyPEM), true, "service-account signing key")
	b.file(r.l.PKI("etcd/ca.crt"), modeCert, string(s.EtcdTrust()), false, r.trustReason("etcd CA certificate"))
	b.keyPair("etcd/server", cp.EtcdServer, r.certReason("etcd server certificate", p+"etcdServer"))
	b.keyPair("etcd/peer", cp.EtcdPeer, r.certReason("etcd peer certificate", p+"etcdPeer"))
	b.keyPair("apiserver", cp.APIServer, r.certReason("kube-apiserver serving certificate", p+"apiServer"))
	b.keyPair("apiserver-kubelet-client", cp.APIServerKubeletClient, r.certReason("kube-apiserver client certificate towards kubelets", p+"apiServerKubeletClient"))
	b.keyPair("apiserver-etcd-client", cp.APIServerEtcdClient, r.certReason("kube-apiserver client certificate towards etcd", p+"apiServerEtcdClient"))
	name := r.c.Metadata.Name
	b.file(r.l.AdminKubeconfig, modeKey, pki.Kubeconfig(name, r.endpointURL(), s.ClusterTrust(), pki.AdminCommonName, cp.Admin), true,
		kubeconfigReason("admin", pki.AdminCommonName, r.endpointURL()))
	b.keyPair(ControllerManagerClientPair, cp.ControllerManager, r.certReason("kube-controller-manager client certificate", p+"controllerManager"))
	b.file(r.l.ControllerManagerKubeconfig, modeKey,
		r.kubeconfigFiles(r.localAPIURL(), pki.ControllerManagerCommonName, ControllerManagerClientPair), true,
		kubeconfigReason("kube-controller-manager", pki.ControllerManagerCommonName, r.localAPIURL()))
	b.keyPair(SchedulerClientPair, cp.Scheduler, r.certReason("kube-scheduler client certificate", p+"scheduler"))
	b.file(r.l.SchedulerKubeconfig, modeKey,
		r.kubeconfigFiles(r.localAPIURL(), pki.SchedulerCommonName, SchedulerClientPair), true,
		kubeconfigReason("kube-scheduler", pki.SchedulerCommonName, r.localAPIURL()))
	return nil
}

// trustReason describes a CA file: during a CA rotation it holds the
// certificates of both generations.
func (r *renderer) trustReason(what string) string {
	rot := r.s.Rotation
	if rot == nil {
		return what
	}
	return fmt.Sprintf("%s of generations %d and %d (CA rotation, %s phase)", what, rot.From, rot.To, rot.Phase)
}

// kubeconfigFiles is the kubeconfig of a component on this node that
// authenticates as user with the client pair written by keyPair(pair),
// trusting the cluster CA file: every credential by path, so a renewal
// rewrites the pair and leaves the kubeconfig as it was. admin.conf, which
// is handed out, embeds its credentials instead.
func (r *renderer) kubeconfigFiles(server, user, pair string) string {
	return pki.KubeconfigFiles(r.c.Metadata.Name, server, r.l.PKI("ca.crt"), user, r.l.PKI(pair+".crt"), r.l.PKI(pair+".key"))
}
