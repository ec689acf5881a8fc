package terraform

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/store"
)

// kubeconfigTTL is the lifetime the configuration asks for, shorter than
// the controller's default so the test sees it honoured.
const kubeconfigTTL = 10 * time.Minute

// kubeconfigBlocks read a kubeconfig for lab through the data source.
const kubeconfigBlocks = `
data "kcore_kubeconfig" "lab" {
  cluster    = kcore_kubernetes_cluster.lab.name
  ttl        = "10m"
  depends_on = [kcore_kubernetes_cluster.lab]
}

output "kubeconfig" {
  value     = data.kcore_kubeconfig.lab.kubeconfig
  sensitive = true
}
output "user" { value = data.kcore_kubeconfig.lab.user }
output "expires" { value = data.kcore_kubeconfig.lab.expires }
`

// seedClusterPKI stores sealed cluster secrets for the stored cluster
// name, as the orchestrator does once a cluster bootstraps, and returns
// them.
func (e *env) seedClusterPKI(name string) *pki.ClusterSecrets {
	e.t.Helper()
	kc, ok := e.stored(name)
	if !ok {
		e.t.Fatalf("no cluster %s to issue a PKI for", name)
	}
	sec, err := pki.IssueClusterSecrets(&kc, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	pt, err := json.Marshal(sec)
	if err != nil {
		e.t.Fatal(err)
	}
	secret := etcdsnap.ClusterSecretName(name)
	sealed, err := e.keyring.Seal(store.KindSecret, secret, pt)
	if err != nil {
		e.t.Fatal(err)
	}
	data, err := json.Marshal(sealed)
	if err != nil {
		e.t.Fatal(err)
	}
	e.c.Seed(store.KindSecret, secret, data)
	return sec
}

// kubeconfigFile is the part of a kubeconfig the test reads.
type kubeconfigFile struct {
	Clusters []struct {
		Cluster struct {
			Server string `yaml:"server"`
			CAData string `yaml:"certificate-authority-data"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		User struct {
			CertData string `yaml:"client-certificate-data"`
			KeyData  string `yaml:"client-key-data"`
		} `yaml:"user"`
	} `yaml:"users"`
}

// readKubeconfig reads the kubeconfig output and returns its client
// certificate, checked to be the cluster CA's for the API endpoint with its
// own key.
func (e *env) readKubeconfig(sec *pki.ClusterSecrets, server string) *x509.Certificate {
	e.t.Helper()
	raw := e.Must("output", "-raw", "kubeconfig")
	var kf kubeconfigFile
	if err := yaml.Unmarshal([]byte(raw), &kf); err != nil {
		e.t.Fatalf("decode the kubeconfig output: %v", err)
	}
	if len(kf.Clusters) != 1 || len(kf.Users) != 1 {
		e.t.Fatalf("kubeconfig has %d clusters and %d users, want 1 and 1", len(kf.Clusters), len(kf.Users))
	}
	if got := kf.Clusters[0].Cluster.Server; got != server {
		e.t.Errorf("kubeconfig server %q, want %q", got, server)
	}
	b64 := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			e.t.Fatalf("kubeconfig data: %v", err)
		}
		return b
	}
	if string(b64(kf.Clusters[0].Cluster.CAData)) != string(sec.CA.CertPEM) {
		e.t.Errorf("kubeconfig CA is not the cluster CA")
	}
	pair, err := tls.X509KeyPair(b64(kf.Users[0].User.CertData), b64(kf.Users[0].User.KeyData))
	if err != nil {
		e.t.Fatalf("kubeconfig client certificate and key: %v", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		e.t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(sec.CA.CertPEM)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: cert.NotBefore.Add(time.Second)}); err != nil {
		e.t.Errorf("kubeconfig client certificate is not the cluster CA's: %v", err)
	}
	return cert
}

// TestKubeconfigDataSource: kcore_kubeconfig fails, naming why, while the
// cluster has no PKI; once it has one, it hands the caller a kubeconfig for
// the cluster's API endpoint whose certificate the cluster CA signed for
// the caller's identity, with the ttl asked for; every read issues a new
// certificate.
func TestKubeconfigDataSource(t *testing.T) {
	e := newEnv(t)
	e.putNode("node-201", "192.168.41.201")
	e.write(cluster("lab", ""))
	e.Must("apply", "-auto-approve")

	e.write(cluster("lab", "") + kubeconfigBlocks)
	out, code := e.Run("plan")
	if code == 0 {
		t.Fatalf("a kubeconfig for a cluster without a PKI was planned:\n%s", out)
	}
	mustContain(t, "kubeconfig before bootstrap", out, "read kcore_kubeconfig", "has no PKI yet")

	sec := e.seedClusterPKI("lab")
	e.Must("apply", "-auto-approve")
	cert := e.readKubeconfig(sec, "https://192.168.41.201:6443")
	user := strings.Trim(strings.TrimSpace(e.Must("output", "user")), `"`)
	if want := pki.UserPrefix + "tofu-admin"; user != want || cert.Subject.CommonName != want {
		t.Errorf("user output %q, certificate for %q; want %q", user, cert.Subject.CommonName, want)
	}
	if !slices.Contains(cert.Subject.Organization, pki.ClusterAdminsGroup) {
		t.Errorf("certificate groups %v lack %s", cert.Subject.Organization, pki.ClusterAdminsGroup)
	}
	expires := strings.Trim(strings.TrimSpace(e.Must("output", "expires")), `"`)
	if want := cert.NotAfter.UTC().Format(time.RFC3339); expires != want {
		t.Errorf("expires output %q, certificate expires %s", expires, want)
	}
	// The ttl reached the controller (its default is hours): the
	// certificate lives the ttl, from a minute back for clock skew.
	if life := cert.NotAfter.Sub(cert.NotBefore); life < kubeconfigTTL || life > kubeconfigTTL+2*time.Minute {
		t.Errorf("certificate lives %s, want the ttl %s (the default is %s)", life, kubeconfigTTL, apiv1.DefaultKubeconfigTTL)
	}

	e.Must("apply", "-refresh-only", "-auto-approve")
	again := e.readKubeconfig(sec, "https://192.168.41.201:6443")
	if again.SerialNumber.Cmp(cert.SerialNumber) == 0 {
		t.Errorf("a second read returned the same certificate (serial %s)", cert.SerialNumber)
	}
}
