package apply

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/pkg/version"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// env is three replicas, each with an HTTPS API.
type env struct {
	t       *testing.T
	c       *harness.Cluster
	ca      *pki.CA
	keyring *secrets.Keyring
	cert    tls.Certificate
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ca, err := pki.NewCA("kcore-test", time.Now(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(pki.CertRequest{
		CommonName: "controller", Organization: []string{apiv1.RoleController},
		IPs:   []net.IP{net.ParseIP("127.0.0.1")},
		Usage: pki.UsageServer | pki.UsageClient, Validity: time.Hour,
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ca: ca, keyring: kr, cert: cert}
	e.c = harness.New(t, harness.Options{Replicas: 3, Hooks: harness.Hooks{Started: e.startAPI, Stopping: apiserve.Stop}})
	e.c.Eventually(harness.DefaultTimeout, func() error {
		l := e.c.Leader()
		if l == nil {
			return errors.New("no leader")
		}
		for _, r := range e.c.Running() {
			if _, err := apiserve.Of(l).Server.RecordMember(context.Background(), r.ID, r.Addr, apiserve.Of(r).Addr, version.Schema); err != nil {
				return err
			}
		}
		return nil
	})
	e.c.WaitCaughtUp()
	return e
}

func (e *env) startAPI(r *harness.Replica) error {
	return apiserve.Start(r, server.Config{CA: e.ca, Keyring: e.keyring, ForwardTLS: server.ClientTLS(e.cert, e.ca.Pool())}, e.cert, e.ca)
}

// follower returns a follower's API address.
func (e *env) follower() string {
	l := e.c.WaitLeader()
	for _, r := range e.c.Running() {
		if r != l {
			return apiserve.Of(r).Addr
		}
	}
	e.t.Fatal("no follower")
	return ""
}

// client returns a pkg/client for role that talks to addr only.
func (e *env) client(role, addr string) *client.Client {
	e.t.Helper()
	kp, err := e.ca.Issue(pki.CertRequest{CommonName: role + "-user", Organization: []string{role}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := client.New(client.Config{Addresses: []string{addr}, CA: e.ca.CertPEM, Cert: kp.CertPEM, Key: kp.KeyPEM})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c
}

// index is the leader's last applied index, read once the last apply's
// audit entry is committed (the server answers before it audits).
func (e *env) index() uint64 {
	e.t.Helper()
	st := e.c.WaitLeader().Node().State()
	e.c.Eventually(harness.DefaultTimeout, func() error {
		if st.KindIndex(apiv1.KindAudit) < st.KindIndex(api.KindKubernetesCluster) {
			return errors.New("the last apply's audit entry is not committed yet")
		}
		return nil
	})
	return st.LastIndex()
}

// putNode registers a ready node whose enp6s0 holds addr/24.
func (e *env) putNode(c *client.Client, id, addr string) {
	e.t.Helper()
	n := api.Node{
		Kind: api.KindNode, Metadata: api.ObjectMeta{Name: id},
		Facts: api.NodeFacts{
			Addresses:  []string{addr},
			Interfaces: []api.Interface{{Name: "enp6s0", Up: true, Addresses: []string{addr + "/24"}}},
			Storage:    []api.StorageBackend{{Class: "lvm", Name: "vg0", SizeBytes: 500 << 30, FreeBytes: 400 << 30}},
		},
		Status: api.NodeHealth{Ready: true},
	}
	if _, err := c.Put(e.t.Context(), api.KindNode, id, n, nil); err != nil {
		e.t.Fatal(err)
	}
}

// cluster decodes a stored cluster from replica i.
func (e *env) cluster(i int, name string) (*api.KubernetesCluster, uint64, bool) {
	o, ok := e.c.Replica(i).Node().State().Get(api.KindKubernetesCluster, name)
	if !ok {
		return nil, 0, false
	}
	var kc api.KubernetesCluster
	if err := json.Unmarshal(o.Data, &kc); err != nil {
		e.t.Fatal(err)
	}
	return &kc, o.ModifyIndex, true
}

// edge is a one-node cluster on node-201.
func edge(name, dns string) api.KubernetesCluster {
	return api.KubernetesCluster{
		Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: name},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.245.0.0/16", ServiceCIDR: "10.97.0.0/16", ClusterDNS: dns,
			APIServerEndpoint: "192.168.41.201:6443", ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "node-201", AdvertiseAddress: "192.168.41.201"}},
		},
	}
}
