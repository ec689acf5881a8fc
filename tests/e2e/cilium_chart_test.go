package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/pkg/orchestrator"
	"kcore.dev/kcore/pkg/render"
)

// ciliumHelmTimeout bounds one helm command against the lab's API server.
const ciliumHelmTimeout = 2 * time.Minute

// testCiliumChartUpgradesInPlace runs the Cilium oneshot's command, as
// rendered for the lab's manifest with cni: cilium, against the lab's API
// server twice: the first run installs the release, the second, with another
// MTU, upgrades the same objects in place (the DaemonSet keeps its uid, its
// pods' configuration checksum changes, so they would roll) instead of
// failing on a release that exists. The lab's nodes cannot pull Cilium's
// images (a lab namespace has no route off the bridge, so a pull from
// quay.io fails inside it and nothing leaves the machine), so its pods
// never start: health's add-on check, run on the real objects, must name
// each node whose agent is blocked and why. The release is uninstalled at
// the end.
// Four things differ from the node's run: helm and the chart come from the
// lab's cache instead of PATH and render.CiliumChartDir, the command talks
// to the API through the VIP from the host, with n1's admin.conf, instead
// of from n1's own namespace, and it does not wait for the agents to be
// ready (--wait=false), since here they never start. The Cilium scenario
// (testCiliumDatapath) runs the node's own command, waiting, on a cluster
// whose agents do.
func testCiliumChartUpgradesInPlace(t *testing.T, l *lab) {
	helm := filepath.Join(l.k8sBin, "helm")
	chart := filepath.Join(l.k8sBin, "cilium-chart")
	for _, p := range []string{helm, filepath.Join(chart, "Chart.yaml")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v (make helm cilium-bins builds it)", err)
		}
	}
	home := t.TempDir()
	env := []string{"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_DATA_HOME=" + filepath.Join(home, "data")}
	c := labCiliumCluster(t, l)
	run1 := labCiliumArgv(t, l, c, helm, chart)
	t.Cleanup(func() {
		out, err := run(ciliumHelmTimeout, env, helm, "uninstall", render.CiliumRelease, "--namespace", render.CiliumNamespace, "--wait",
			"--kubeconfig="+filepath.Join(l.dir, "n1", "etc", "kubernetes", "admin.conf"))
		if err != nil && !strings.Contains(err.Error(), "not found") {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	})
	if out, err := run(ciliumHelmTimeout, env, run1...); err != nil {
		t.Fatalf("the first run (install): %v\n%s", err, out)
	}
	mtu1, uid1, sum1 := ciliumObjects(t, l)
	if mtu1 != "1500" || uid1 == "" || sum1 == "" {
		t.Fatalf("after the install: cilium-config mtu %q, DaemonSet uid %q, configuration checksum %q", mtu1, uid1, sum1)
	}
	checkCiliumHealthNamesNodes(t, l)
	c.Spec.Cilium.MTU = 9000
	run2 := labCiliumArgv(t, l, c, helm, chart)
	if out, err := run(ciliumHelmTimeout, env, run2...); err != nil {
		t.Fatalf("the second run (MTU 9000 on an installed release): %v\n%s", err, out)
	}
	mtu2, uid2, sum2 := ciliumObjects(t, l)
	if mtu2 != "9000" {
		t.Errorf("after the upgrade cilium-config says mtu %q, want 9000", mtu2)
	}
	if uid2 != uid1 {
		t.Errorf("the upgrade replaced the DaemonSet (uid %s, then %s) instead of changing it", uid1, uid2)
	}
	if sum2 == sum1 {
		t.Error("the upgrade left the agents' configuration checksum as it was: their pods would not roll")
	}
	releases, err := l.kubectl("get", "secrets", "-n", render.CiliumNamespace, "-l", "owner=helm,name="+render.CiliumRelease, "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(releases)); n != 2 {
		t.Errorf("%d revisions of the release, want 2 (an install and an upgrade):\n%s", n, releases)
	}
	t.Logf("cilium chart: installed, then upgraded in place to MTU 9000 (DaemonSet %s kept)", uid1)
}

// labCiliumCluster is the lab's manifest with cni: cilium on port 6443
// (any other port means the bridge CNI), defaulted.
func labCiliumCluster(t *testing.T, l *lab) *api.KubernetesCluster {
	t.Helper()
	src := edit(t, l.labManifest(t), "cni: bridge", "cni: cilium")
	src = edit(t, src, ":"+labAPIPort(t, l)+"\n", ":6443\n")
	docs, ds := manifest.Parse("cluster.yaml", []byte(src))
	if ds.HasErrors() || len(docs) != 1 {
		t.Fatalf("the lab manifest with cni: cilium: %v", ds)
	}
	c, ok := docs[0].Object.(*api.KubernetesCluster)
	if !ok {
		t.Fatalf("the lab manifest holds a %T", docs[0].Object)
	}
	c.Default()
	return c
}

// labAPIPort is the port of the lab manifest's apiServerEndpoint.
func labAPIPort(t *testing.T, l *lab) string {
	t.Helper()
	for _, line := range strings.Split(l.labManifest(t), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "apiServerEndpoint:"); ok {
			_, port, found := strings.Cut(strings.TrimSpace(v), ":")
			if found {
				return port
			}
		}
	}
	t.Fatal("the lab manifest has no apiServerEndpoint")
	return ""
}

// labCiliumArgv is the rendered Cilium argv for c with helm, the chart, the
// kubeconfig and the API server moved to where the host finds them (see
// testCiliumChartUpgradesInPlace).
func labCiliumArgv(t *testing.T, l *lab, c *api.KubernetesCluster, helm, chart string) []string {
	t.Helper()
	argv, err := render.CiliumArgs(c)
	if err != nil {
		t.Fatal(err)
	}
	vip := c.Spec.HighAvailability.VIPAddress
	out := append([]string{helm}, argv[1:]...)
	moved := 0
	for i, a := range out {
		switch {
		case a == render.CiliumChartDir:
			out[i] = chart
		case strings.HasPrefix(a, "--kubeconfig="):
			out[i] = "--kubeconfig=" + filepath.Join(l.dir, "n1", "etc", "kubernetes", "admin.conf")
		case strings.HasPrefix(a, "--kube-apiserver="):
			out[i] = fmt.Sprintf("--kube-apiserver=https://%s:%s", vip, labAPIPort(t, l))
		case a == "--wait":
			out[i] = "--wait=false"
		default:
			continue
		}
		moved++
	}
	if moved != 4 {
		t.Fatalf("the rendered Cilium argv changed shape (moved %d of chart, kubeconfig, API server, --wait): %q", moved, argv)
	}
	return out
}

// ciliumObjects reads what an upgrade must change or keep: cilium-config's
// mtu, the agents' DaemonSet's uid and its pods' configuration checksum.
func ciliumObjects(t *testing.T, l *lab) (mtu, uid, checksum string) {
	t.Helper()
	get := func(args ...string) string {
		out, err := l.kubectl(append([]string{"-n", render.CiliumNamespace, "get"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	return get("configmap", "cilium-config", "-o", "jsonpath={.data.mtu}"),
		get("daemonset", "cilium", "-o", "jsonpath={.metadata.uid}"),
		get("daemonset", "cilium", "-o", `jsonpath={.spec.template.metadata.annotations.cilium\.io/cilium-configmap-checksum}`)
}

// checkCiliumHealthNamesNodes runs the controller's add-on check
// (orchestrator.CheckAddons over render.CiliumWorkloads) against the lab's
// API server until it names every lab node's agent pod, with an image that
// cannot be pulled as the first reason, which is what the lab can show of
// agents that are not ready.
func checkCiliumHealthNamesNodes(t *testing.T, l *lab) {
	t.Helper()
	kube := l.adminKube(t)
	var cond api.Condition
	err := poll(ciliumHelmTimeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cond = orchestrator.CheckAddons(ctx, kube, render.CiliumWorkloads())
		if cond.Status != orchestrator.StatusFalse || (cond.Reason != "ErrImagePull" && cond.Reason != "ImagePullBackOff") {
			return fmt.Errorf("condition %s %s: %s", cond.Status, cond.Reason, cond.Message)
		}
		// The agents' part of the message, before the operator's.
		agents, _, _ := strings.Cut(cond.Message, render.CiliumNamespace+"/"+render.CiliumOperatorDeployment+" ")
		for _, n := range labNodes() {
			if !strings.Contains(agents, " on node "+n.id+":") {
				return fmt.Errorf("the agent on %s not named yet: %s", n.id, cond.Message)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("health's add-on check of Cilium: %v", err)
	}
	for _, want := range []string{render.CiliumNamespace + "/" + render.CiliumAgentDaemonSet + " 0/", render.CiliumNamespace + "/" + render.CiliumOperatorDeployment + " 0/"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("the condition lacks %q: %s", want, cond.Message)
		}
	}
	t.Logf("Addons %s %s: %s", cond.Status, cond.Reason, cond.Message)
}

// adminKube is the controller's Kubernetes client for the lab's API server
// through the VIP, with the credentials of n1's admin.conf.
func (l *lab) adminKube(t *testing.T) *orchestrator.HTTPKube {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(l.dir, "n1", "etc", "kubernetes", "admin.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `yaml:"server"`
				CA     string `yaml:"certificate-authority-data"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
		Users []struct {
			User struct {
				Cert string `yaml:"client-certificate-data"`
				Key  string `yaml:"client-key-data"`
			} `yaml:"user"`
		} `yaml:"users"`
	}
	if err := yaml.Unmarshal(raw, &kc); err != nil || len(kc.Clusters) != 1 || len(kc.Users) != 1 {
		t.Fatalf("admin.conf: %v", err)
	}
	decode := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("admin.conf: %v", err)
		}
		return b
	}
	pair, err := tls.X509KeyPair(decode(kc.Users[0].User.Cert), decode(kc.Users[0].User.Key))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(decode(kc.Clusters[0].Cluster.CA)) {
		t.Fatal("admin.conf: no CA")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{pair}},
	}}
	t.Cleanup(client.CloseIdleConnections)
	return &orchestrator.HTTPKube{Base: kc.Clusters[0].Cluster.Server, Client: client}
}
