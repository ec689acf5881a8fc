package manifests

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
)

// files is read-only: embed.FS cannot be modified.
//
//go:embed *.tmpl *.yaml
var files embed.FS

// NodePaths is one entry of the local-path provisioner's nodePathMap.
type NodePaths struct {
	Node  string   `json:"node"`
	Paths []string `json:"paths"`
}

// Provisioner parameterises the local-path provisioner manifest.
type Provisioner struct {
	// Image defaults to LocalPathProvisionerImage.
	Image string
	// HelperImage runs the helper pods that create and remove a volume's
	// directory; it defaults to BusyboxImage.
	HelperImage string
	// StorageClassName names the StorageClass.
	StorageClassName string
	// NodePaths lists, per node, the directories claims are created in.
	NodePaths []NodePaths
}

// LocalPathProvisioner renders the provisioner's namespace, RBAC, Deployment,
// StorageClass and ConfigMap.
func LocalPathProvisioner(p Provisioner) (string, error) {
	if p.Image == "" {
		p.Image = LocalPathProvisionerImage
	}
	if p.HelperImage == "" {
		p.HelperImage = BusyboxImage
	}
	paths := p.NodePaths
	if paths == nil {
		paths = []NodePaths{}
	}
	cfg, err := json.MarshalIndent(struct {
		NodePathMap []NodePaths `json:"nodePathMap"`
	}{paths}, "", "  ")
	if err != nil {
		return "", fmt.Errorf("render local-path config: %w", err)
	}
	return execute("local-path-provisioner.yaml.tmpl", struct {
		Provisioner
		ConfigJSON string
	}{p, string(cfg)})
}

// CiliumL2 renders the CiliumLoadBalancerIPPool and CiliumL2AnnouncementPolicy
// named kcore.
func CiliumL2(pools, interfaces []string) (string, error) {
	return execute("cilium-l2.yaml.tmpl", struct{ Pools, Interfaces []string }{pools, interfaces})
}

// DNS parameterises the CoreDNS manifest.
type DNS struct {
	// ClusterIP is the kube-dns Service address (spec.clusterDns).
	ClusterIP string
	// ClusterDomain is usually cluster.local.
	ClusterDomain string
	// Image defaults to CoreDNSImage.
	Image string
	// Replicas of the Deployment.
	Replicas int
}

// Where the kube-dns Service lives: the object CoreDNSService renders.
const (
	KubeDNSNamespace = "kube-system"
	KubeDNSService   = "kube-dns"
)

// CoreDNS renders CoreDNS with its RBAC, Corefile and Deployment; the
// kube-dns Service is rendered apart (CoreDNSService) because its cluster
// IP cannot change in place: a new one means deleting and creating it.
func CoreDNS(d DNS) (string, error) {
	if d.Image == "" {
		d.Image = CoreDNSImage
	}
	return execute("coredns.yaml.tmpl", d)
}

// CoreDNSService renders the kube-dns Service at d.ClusterIP.
func CoreDNSService(d DNS) (string, error) {
	return execute("kube-dns-service.yaml.tmpl", d)
}

// BootstrapRBAC returns the RBAC kcore applies when a cluster comes up.
func BootstrapRBAC() (string, error) {
	b, err := files.ReadFile("rbac.yaml")
	if err != nil {
		return "", fmt.Errorf("read rbac manifest: %w", err)
	}
	return string(b), nil
}

func execute(name string, data any) (string, error) {
	t, err := template.New(name).Funcs(template.FuncMap{"indent": indent}).ParseFS(files, name)
	if err != nil {
		return "", fmt.Errorf("parse manifest %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("render manifest %s: %w", name, err)
	}
	return b.String(), nil
}

func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}
