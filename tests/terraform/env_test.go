package terraform

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
	"kcore.dev/kcore/tests/tofu"
)

// Bounds of the tofu commands.
const (
	// tofuTimeout bounds one tofu command.
	tofuTimeout = 5 * time.Minute
	// buildTimeout bounds building the provider binary.
	buildTimeout = 10 * time.Minute
)

// env is a controller of three replicas, a tofu working directory and
// the credentials the provider uses.
type env struct {
	*tofu.Dir
	t       *testing.T
	c       *harness.Cluster
	ca      *pki.CA
	keyring *secrets.Keyring
	cert    tls.Certificate
	admin   *client.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	tofu.Binary(t)
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
	e.setup()
	return e
}

func (e *env) startAPI(r *harness.Replica) error {
	return apiserve.Start(r, server.Config{CA: e.ca, Keyring: e.keyring, ForwardTLS: server.ClientTLS(e.cert, e.ca.Pool())}, e.cert, e.ca)
}

// setup writes the admin credentials and makes the tofu working directory
// (tofu.New builds the provider and installs it through a dev override).
func (e *env) setup() {
	t := e.t
	kp, err := e.ca.Issue(pki.CertRequest{CommonName: "tofu-admin", Organization: []string{apiv1.RoleClusterAdmin}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, r := range e.c.Running() {
		addrs = append(addrs, apiserve.Of(r).Addr)
	}
	e.admin, err = client.New(client.Config{Addresses: addrs, CA: e.ca.CertPEM, Cert: kp.CertPEM, Key: kp.KeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.admin.Close)
	_, file, _, _ := runtime.Caller(0)
	e.Dir = tofu.New(t, tofu.Options{Repo: filepath.Join(filepath.Dir(file), "..", ".."), BuildTimeout: buildTimeout, CommandTimeout: tofuTimeout})
	creds := filepath.Join(e.Path, "creds")
	if err := os.MkdirAll(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ca.pem": e.ca.CertPEM, "cert.pem": kp.CertPEM, "key.pem": kp.KeyPEM} {
		if err := os.WriteFile(filepath.Join(creds, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.Env = append(e.Env,
		"TF_VAR_addresses=[\""+strings.Join(addrs, "\",\"")+"\"]",
		"TF_VAR_creds="+creds,
	)
}

// providerBlock is the head of every configuration: the provider from the
// dev override, configured with inline addresses and PEM.
const providerBlock = `terraform {
  required_providers {
    kcore = { source = "kcore/kcore" }
  }
}

variable "addresses" { type = list(string) }
variable "creds" { type = string }

provider "kcore" {
  addresses = var.addresses
  ca_pem    = file("${var.creds}/ca.pem")
  cert_pem  = file("${var.creds}/cert.pem")
  key_pem   = file("${var.creds}/key.pem")
}
`

// write replaces the configuration's main.tf.
func (e *env) write(body string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.Path, "main.tf"), []byte(providerBlock+body), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// putNode registers a ready node whose enp6s0 holds addr/24.
func (e *env) putNode(id, addr string) {
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
	if _, err := e.admin.Put(e.t.Context(), api.KindNode, id, n, nil); err != nil {
		e.t.Fatal(err)
	}
}

// stored reads a cluster from the controller; ok is false when it is not stored.
func (e *env) stored(name string) (api.KubernetesCluster, bool) {
	e.t.Helper()
	var kc api.KubernetesCluster
	o, err := e.admin.Get(e.t.Context(), api.KindKubernetesCluster, name)
	if errors.Is(err, client.ErrNotFound) {
		return kc, false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(o.Data, &kc); err != nil {
		e.t.Fatal(err)
	}
	return kc, true
}

// applyDirect stores a cluster the way kctl does, outside tofu.
func (e *env) applyDirect(kc api.KubernetesCluster) {
	e.t.Helper()
	req := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{kc}}
	resp, err := e.admin.Plan(e.t.Context(), req)
	if err != nil || resp.Blocked() {
		e.t.Fatalf("plan %s: %+v, %v", kc.Metadata.Name, resp, err)
	}
	if _, err := e.admin.Apply(e.t.Context(), req, resp.Plan.Index, resp.Hash); err != nil {
		e.t.Fatalf("apply %s: %v", kc.Metadata.Name, err)
	}
}

// markReady sets a stored cluster's phase to ready, as the orchestrator
// would once its nodes report healthy.
func (e *env) markReady(name string) {
	e.t.Helper()
	kc, ok := e.stored(name)
	if !ok {
		e.t.Fatalf("no cluster %s to mark ready", name)
	}
	kc.Status.Phase = api.PhaseReady
	e.c.Seed(api.KindKubernetesCluster, name, kc)
}
