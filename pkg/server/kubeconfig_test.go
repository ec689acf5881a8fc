package server

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/store"
)

// withClusterPKI stores sealed cluster secrets for lab, as the orchestrator
// does once a cluster bootstraps, and returns them.
func (e *etcdRouteEnv) withClusterPKI() *pki.ClusterSecrets {
	e.t.Helper()
	kc := &api.KubernetesCluster{Metadata: api.ObjectMeta{Name: "lab"}, Spec: api.ClusterSpec{
		APIServerEndpoint: "10.77.0.100:6443", ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12",
		ControlPlaneNodes: []api.ClusterNode{{NodeID: "n1", AdvertiseAddress: "10.77.0.11"}},
	}}
	kc.Default()
	sec, err := pki.IssueClusterSecrets(kc, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	pt, _ := json.Marshal(sec)
	name := etcdsnap.ClusterSecretName("lab")
	sealed, err := e.s.keyring.Seal(store.KindSecret, name, pt)
	if err != nil {
		e.t.Fatal(err)
	}
	data, _ := json.Marshal(sealed)
	kc.Kind, kc.APIVersion = api.KindKubernetesCluster, api.APIVersion
	cdata, _ := json.Marshal(kc)
	cmd, _ := store.Batch{Ops: []store.Op{
		{Put: &store.Put{Kind: store.KindSecret, Name: name, Data: data}},
		{Put: &store.Put{Kind: api.KindKubernetesCluster, Name: "lab", Data: cdata}},
	}}.Command()
	if _, err := e.be.Apply(context.Background(), cmd); err != nil {
		e.t.Fatal(err)
	}
	return sec
}

func TestKubeconfigRoles(t *testing.T) {
	path := apiv1.KubeconfigPath("lab")
	for _, tt := range []struct {
		role string
		want int
	}{
		{apiv1.RoleViewer, http.StatusForbidden},
		{apiv1.RoleOperator, http.StatusForbidden},
		{apiv1.RoleNode, http.StatusForbidden},
		{apiv1.RoleController, http.StatusForbidden},
		{apiv1.RoleClusterAdmin, http.StatusOK},
	} {
		t.Run(tt.role, func(t *testing.T) {
			e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
			e.withClusterPKI()
			code, body := e.call(tt.role, http.MethodPost, path, `{}`)
			if code != tt.want {
				t.Fatalf("kubeconfig as %s = %d %s, want %d", tt.role, code, body, tt.want)
			}
			if code != http.StatusOK && strings.Contains(body, "client-key-data") {
				t.Fatalf("refused call carries a key: %s", body)
			}
			if !e.auditedObject("POST /v1/clusters/{name}/kubeconfig", tt.want) {
				t.Errorf("kubeconfig call as %s (%d) not audited", tt.role, tt.want)
			}
		})
	}
	t.Run("anonymous", func(t *testing.T) {
		e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
		e.withClusterPKI()
		w := httptestCall(e, http.MethodPost, path, `{}`)
		if w != http.StatusUnauthorized {
			t.Fatalf("anonymous kubeconfig = %d, want 401", w)
		}
	})
}

func TestKubeconfigCertificate(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
	sec := e.withClusterPKI()
	code, body := e.call(apiv1.RoleClusterAdmin, http.MethodPost, apiv1.KubeconfigPath("lab"), `{"ttl":"1h"}`)
	if code != http.StatusOK {
		t.Fatalf("kubeconfig = %d %s", code, body)
	}
	var resp apiv1.KubeconfigResponse
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Clusters []struct {
			Cluster struct {
				Server string `yaml:"server"`
				CA     string `yaml:"certificate-authority-data"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
		Users []struct {
			User struct {
				Cert string `yaml:"client-certificate-data"`
			} `yaml:"user"`
		} `yaml:"users"`
	}
	if err := yaml.Unmarshal([]byte(resp.Kubeconfig), &cfg); err != nil || len(cfg.Clusters) != 1 || len(cfg.Users) != 1 {
		t.Fatalf("kubeconfig does not parse: %v\n%s", err, resp.Kubeconfig)
	}
	if cfg.Clusters[0].Cluster.Server != "https://10.77.0.100:6443" {
		t.Errorf("server %q, want the cluster's endpoint (the VIP)", cfg.Clusters[0].Cluster.Server)
	}
	certPEM, _ := base64.StdEncoding.DecodeString(cfg.Users[0].User.Cert)
	cert, err := pki.ParseCert(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := pki.ParseCert(sec.CA.CertPEM)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("certificate is not a client certificate of the cluster CA: %v", err)
	}
	if cert.Subject.CommonName != "kcore:alice" || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != pki.ClusterAdminsGroup {
		t.Errorf("subject %v, want CN kcore:alice in %s", cert.Subject, pki.ClusterAdminsGroup)
	}
	if life := cert.NotAfter.Sub(cert.NotBefore); life > time.Hour+2*time.Minute {
		t.Errorf("certificate lives %s, asked for 1h", life)
	}
	if resp.User != "kcore:alice" || resp.Expires == "" {
		t.Errorf("response %+v", resp)
	}
	for _, st := range e.be.st.List(apiv1.KindAudit) {
		if strings.Contains(string(st.Data), "PRIVATE KEY") {
			t.Fatal("the audit log holds the key")
		}
	}
}

func TestKubeconfigTTLBounds(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
	e.withClusterPKI()
	for ttl, want := range map[string]int{
		"":      http.StatusOK,
		"5m":    http.StatusOK,
		"168h":  http.StatusOK,
		"4m59s": http.StatusBadRequest,
		"169h":  http.StatusBadRequest,
		"1ns":   http.StatusBadRequest,
		"-1h":   http.StatusBadRequest,
		"soon":  http.StatusBadRequest,
	} {
		body, _ := json.Marshal(apiv1.KubeconfigRequest{TTL: ttl})
		if code, out := e.call(apiv1.RoleClusterAdmin, http.MethodPost, apiv1.KubeconfigPath("lab"), string(body)); code != want {
			t.Errorf("ttl %q = %d %s, want %d", ttl, code, out, want)
		}
	}
}

func TestKubeconfigBeforeBootstrap(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseBootstrapping})
	if code, body := e.call(apiv1.RoleClusterAdmin, http.MethodPost, apiv1.KubeconfigPath("lab"), `{}`); code != http.StatusConflict || !strings.Contains(body, "no PKI yet") {
		t.Fatalf("kubeconfig without PKI = %d %s, want 409", code, body)
	}
	if code, _ := e.call(apiv1.RoleClusterAdmin, http.MethodPost, apiv1.KubeconfigPath("nope"), `{}`); code != http.StatusNotFound {
		t.Fatalf("kubeconfig of an unknown cluster = %d, want 404", code)
	}
}

// auditedObject reports whether a call of route ended with result on some
// object.
func (e *etcdRouteEnv) auditedObject(route string, result int) bool {
	for _, o := range e.be.st.List(apiv1.KindAudit) {
		var a apiv1.AuditEntry
		if json.Unmarshal(o.Data, &a) == nil && a.Route == route && a.Result == result {
			return true
		}
	}
	return false
}

// httptestCall serves method path without a client certificate and
// returns the status.
func httptestCall(e *etcdRouteEnv, method, path, body string) int {
	w := httptest.NewRecorder()
	e.s.Handler().ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
	return w.Code
}
