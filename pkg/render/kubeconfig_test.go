package render

import (
	"crypto/tls"
	"crypto/x509"
	"path"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/api"
)

// kubeconfigDoc is the part of a kubeconfig client-go's clientcmd reads
// for TLS.
type kubeconfigDoc struct {
	Clusters []struct {
		Cluster map[string]string `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string            `yaml:"name"`
		User map[string]string `yaml:"user"`
	} `yaml:"users"`
}

// TestComponentKubeconfigsNameTheirFiles checks the shape that makes
// client-go reload a renewed pair without a restart (transport.loadTLSFiles
// sets ReloadTLSFiles when client-certificate and client-key are paths and
// no -data is given, and ReloadCAFiles for a certificate-authority path):
// every component kubeconfig names its credentials by absolute path, the
// files are rendered on the node, hold a matching pair issued to the
// kubeconfig's user by the CA file, and are inputs of the unit that reads
// the kubeconfig. admin.conf, handed out to users, stays self-contained.
func TestComponentKubeconfigsNameTheirFiles(t *testing.T) {
	readers := map[string]string{
		KubeletKubeconfigPath:           UnitKubelet,
		ControllerManagerKubeconfigPath: UnitControllerManager,
		SchedulerKubeconfigPath:         UnitScheduler,
		KubeProxyKubeconfigPath:         UnitKubeProxy,
	}
	seen := map[string]bool{}
	for _, name := range []string{"lab", "bridge"} {
		c := loadCluster(t, name)
		states, err := Render(c, issueReal(t, c), testFacts(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for id, ns := range states {
			content := files(ns)
			for kc, unit := range readers {
				raw, ok := content[kc]
				if !ok {
					continue
				}
				seen[kc] = true
				var doc kubeconfigDoc
				if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
					t.Fatalf("%s %s: %v", id, kc, err)
				}
				if len(doc.Clusters) != 1 || len(doc.Users) != 1 {
					t.Fatalf("%s %s: %d clusters, %d users", id, kc, len(doc.Clusters), len(doc.Users))
				}
				cl, user := doc.Clusters[0].Cluster, doc.Users[0].User
				for _, data := range []string{cl["certificate-authority-data"], user["client-certificate-data"], user["client-key-data"]} {
					if data != "" {
						t.Errorf("%s %s embeds credentials: client-go would not reload them", id, kc)
					}
				}
				caFile, certFile, keyFile := cl["certificate-authority"], user["client-certificate"], user["client-key"]
				i := slices.IndexFunc(ns.Units, func(u api.Unit) bool { return u.Name == unit })
				if i < 0 {
					t.Fatalf("%s: no unit %s reads %s", id, unit, kc)
				}
				for _, p := range []string{caFile, certFile, keyFile} {
					if !path.IsAbs(p) {
						t.Errorf("%s %s: credential path %q not absolute", id, kc, p)
					}
					if _, ok := content[p]; !ok {
						t.Errorf("%s %s: %s is not rendered on the node", id, kc, p)
					}
					if !slices.Contains(ns.Units[i].Inputs, p) {
						t.Errorf("%s %s: %s is not an input of %s", id, kc, p, unit)
					}
				}
				pair, err := tls.X509KeyPair([]byte(content[certFile]), []byte(content[keyFile]))
				if err != nil {
					t.Fatalf("%s %s: pair: %v", id, kc, err)
				}
				leaf, err := x509.ParseCertificate(pair.Certificate[0])
				if err != nil {
					t.Fatal(err)
				}
				if leaf.Subject.CommonName != doc.Users[0].Name {
					t.Errorf("%s %s: certificate CN %q, user %q", id, kc, leaf.Subject.CommonName, doc.Users[0].Name)
				}
				roots := x509.NewCertPool()
				if !roots.AppendCertsFromPEM([]byte(content[caFile])) {
					t.Fatalf("%s %s: no CA in %s", id, kc, caFile)
				}
				if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: leaf.NotBefore, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
					t.Errorf("%s %s: %v", id, kc, err)
				}
			}
			if raw, ok := content[AdminKubeconfigPath]; ok {
				var doc kubeconfigDoc
				if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
					t.Fatal(err)
				}
				if doc.Users[0].User["client-certificate-data"] == "" || doc.Clusters[0].Cluster["certificate-authority-data"] == "" {
					t.Errorf("%s: admin.conf must embed its credentials: it is handed out", id)
				}
			}
		}
	}
	for kc := range readers {
		if !seen[kc] {
			t.Errorf("no cluster rendered %s", kc)
		}
	}
}
