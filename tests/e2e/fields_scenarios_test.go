package e2e

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/render"
)

// What the field scenarios change the lab to.
const (
	newClusterDNS = "10.96.0.53"
	oldClusterDNS = "10.96.0.10"
	newVIP        = "10.77.0.101"
	// spareNode is the namespace LAB_NODES=4 adds, the worker the
	// scheduleOnControlPlane scenario needs (a cluster without workers
	// must schedule on its control planes).
	spareNode = "lab-n4"
	spareAddr = "10.77.0.14"
)

// testFieldChanges runs, on the one lab, a scenario per field a second
// apply updates (extraArgs has its own): each applies a change, checks the
// plan against what changed on the nodes and in Kubernetes, and restores
// the lab manifest so later subtests find the lab as before.
func testFieldChanges(t *testing.T, l *lab) {
	for _, s := range []struct {
		name string
		run  func(*testing.T, *lab)
	}{
		{"cluster-dns", testClusterDNSChange},
		{"api-endpoint-and-vip", testEndpointVIPChange},
		{"vip-interface", testVIPInterfacePlan},
		{"volumes", testVolumesPlan},
		{"schedule-on-control-plane", testScheduleOnControlPlane},
	} {
		if !timed(t, s.name, func(t *testing.T) { s.run(t, l) }) {
			return
		}
	}
}

// testClusterDNSChange: clusterDns 10.96.0.10 → 10.96.0.53. The plan
// restarts kubelet on every node for its new configuration and replaces
// the kube-dns Service (its cluster IP cannot change in place), saying so;
// Kubernetes then has the Service at the new IP and every kubelet runs
// with the new resolver. Then back.
func testClusterDNSChange(t *testing.T, l *lab) {
	inv := l.startInvariants(t, labNodes()...)
	defer inv.check(t)
	base := l.labManifest(t)
	for _, dns := range []string{newClusterDNS, oldClusterDNS} {
		src := edit(t, base, "clusterDns: "+oldClusterDNS, "clusterDns: "+dns)
		p, _ := l.applyField(t, src)
		for _, n := range labNodes() {
			s := p.step(n.id, "kubelet")
			if s == nil || s.Action != "restart" || !s.has("file", "/var/lib/kubelet/config.yaml") || !s.has("unit", "kcore-kubelet") {
				t.Errorf("%s: the plan does not restart kubelet for its new configuration: %+v", n.id, s)
			}
			data, err := os.ReadFile(filepath.Join(l.dir, n.name, "var", "lib", "kubelet", "config.yaml"))
			if err != nil || !strings.Contains(string(data), dns) {
				t.Errorf("%s: kubelet config.yaml on disk lacks %s: %v", n.id, dns, err)
			}
			eventually(t, n.id+"'s kubelet runs with clusterDNS "+dns, time.Minute, func() error {
				out, err := l.kubectl("get", "--raw", "/api/v1/nodes/"+n.id+"/proxy/configz")
				if err != nil {
					return err
				}
				var cz struct {
					KubeletConfig struct {
						ClusterDNS []string `json:"clusterDNS"`
					} `json:"kubeletconfig"`
				}
				if err := json.Unmarshal([]byte(out), &cz); err != nil {
					return err
				}
				if !slices.Equal(cz.KubeletConfig.ClusterDNS, []string{dns}) {
					return fmt.Errorf("kubelet on %s runs with clusterDNS %v", n.id, cz.KubeletConfig.ClusterDNS)
				}
				return nil
			})
		}
		s := p.step("lab-n1", "addons")
		switch {
		case s == nil || s.Action != "replace":
			t.Errorf("the plan does not replace the kube-dns Service on lab-n1: %+v", s)
		case !strings.Contains(s.Detail, "cannot change in place") || !s.has("task", render.TaskKubeDNS) || !s.has("file", "/etc/kubernetes/addons/kube-dns-service.yaml"):
			t.Errorf("the kube-dns replace step does not say why or what: %+v", s)
		case !slices.ContainsFunc(s.Changes, func(it planItem) bool { return slices.Contains(it.Objects, "changed Service kube-system/kube-dns") }):
			t.Errorf("the plan does not name the Service kube-system/kube-dns: %+v", s.Changes)
		}
		eventually(t, "Service kube-system/kube-dns at "+dns, time.Minute, func() error {
			out, err := l.kubectl("-n", "kube-system", "get", "service", "kube-dns", "-o", "jsonpath={.spec.clusterIP}")
			if err != nil {
				return err
			}
			if out != dns {
				return fmt.Errorf("kube-dns cluster IP %q", out)
			}
			return nil
		})
	}
}

// testEndpointVIPChange: apiServerEndpoint and vipAddress 10.77.0.100 →
// 10.77.0.101 (same port: another port would change nothing more here and
// 6443 would change the CNI). The plan reissues the API server
// certificates and kubeconfigs, restarts kube-apiserver and moves the VIP
// on each control plane; then exactly one node holds the new VIP, none the
// old, the API answers through it with a certificate for it, and admin.conf
// names it. Then back.
func testEndpointVIPChange(t *testing.T, l *lab) {
	base := l.labManifest(t)
	for _, addr := range []string{newVIP, vip} {
		src := edit(t, base, vip+":"+apiPort, addr+":"+apiPort)
		src = edit(t, src, "vipAddress: "+vip, "vipAddress: "+addr)
		p, _ := l.applyField(t, src)
		for _, n := range labNodes() {
			if s := p.step(n.id, "keepalived"); s == nil || s.Disruption != "vip-move" || !s.has("file", "/etc/keepalived/keepalived.conf") || !s.has("unit", "kcore-keepalived") {
				t.Errorf("%s: the plan does not move the VIP: %+v", n.id, s)
			}
			if s := p.step(n.id, "certificates"); !s.has("file", "/etc/kubernetes/pki/apiserver.crt") || !s.has("file", "/etc/kubernetes/admin.conf") {
				t.Errorf("%s: the plan does not reissue the API server certificate and admin.conf: %+v", n.id, s)
			}
			if s := p.step(n.id, "kube-apiserver"); !s.has("unit", "kcore-kube-apiserver") {
				t.Errorf("%s: the plan does not restart kube-apiserver: %+v", n.id, s)
			}
			conf, err := os.ReadFile(filepath.Join(l.dir, n.name, "etc", "kubernetes", "admin.conf"))
			if err != nil || !strings.Contains(string(conf), "server: https://"+addr+":"+apiPort) {
				t.Errorf("%s: admin.conf does not name https://%s:%s: %v", n.id, addr, apiPort, err)
			}
			if err := certHasIP(filepath.Join(l.dir, n.name, "etc", "kubernetes", "pki", "apiserver.crt"), addr); err != nil {
				t.Errorf("%s: %v", n.id, err)
			}
		}
		other := newVIP
		if addr == newVIP {
			other = vip
		}
		eventually(t, "one node holds "+addr+", none "+other, 30*time.Second, func() error {
			now, err := addrHolders(addr)
			if err != nil {
				return err
			}
			was, err := addrHolders(other)
			if err != nil {
				return err
			}
			if len(now) != 1 || len(was) != 0 {
				return fmt.Errorf("%s held by %v, %s by %v", addr, now, other, was)
			}
			return nil
		})
		eventually(t, "/readyz through "+addr, 30*time.Second, func() error {
			out, err := l.kubectl("--server", "https://"+addr+":"+apiPort, "get", "--raw", "/readyz")
			if err == nil && strings.TrimSpace(out) != "ok" {
				err = fmt.Errorf("/readyz answered %q", out)
			}
			return err
		})
	}
}

// certHasIP checks that the PEM certificate at path is valid for ip.
func certHasIP(path, ip string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	blk, _ := pem.Decode(data)
	if blk == nil {
		return fmt.Errorf("%s holds no PEM certificate", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	if !slices.ContainsFunc(c.IPAddresses, func(a net.IP) bool { return a.Equal(net.ParseIP(ip)) }) {
		return fmt.Errorf("%s has no SAN %s (%v)", path, ip, c.IPAddresses)
	}
	return nil
}

// testVIPInterfacePlan: vipInterface is planned, not applied. Each lab
// node has one link on the lab bridge, eth0 (its agent also reports the
// bridge CNI's kcore0 and pods' veths once pods run, and never lo), so there
// is no other interface a VIP could move to: the plan refuses lo and a
// missing eth9 with interface-missing on each control plane, naming the
// interfaces it has, and nothing changes. pkg/plan's TestUpdateSteps covers the plan of a
// vipInterface change to an interface the nodes have (keepalived.conf and
// a keepalived restart, vip-move, on each control plane).
func testVIPInterfacePlan(t *testing.T, l *lab) {
	base := l.labManifest(t)
	for _, iface := range []string{"lo", "eth9"} {
		p, text, _, _ := l.planFor(t, edit(t, base, "vipInterface: eth0", "vipInterface: "+iface))
		var missing []string
		for _, b := range p.Blocking {
			if b.Code == "interface-missing" && strings.Contains(b.Message, "(it has eth0") {
				missing = append(missing, b.Node)
			}
		}
		if !slices.Equal(missing, []string{"lab-n1", "lab-n2", "lab-n3"}) || len(plannedItems(p)) > 0 {
			t.Errorf("plan vipInterface %s: interface-missing on %v, want on the three control planes and no change\n%s", iface, missing, text)
		}
	}
}

// testVolumesPlan: a shared volume needs an LVM volume group or a ZFS pool
// on its node, and the lab's kernel has neither device-mapper nor ZFS, so
// no lab node reports a storage backend: the plan refuses the volume with
// storage-class-mismatch on its node and the cluster keeps running as it
// was (pkg/volume's tests cover the filesystem path on a loop device).
func testVolumesPlan(t *testing.T, l *lab) {
	src := edit(t, l.labManifest(t), "    volumes:\n", `    volumes:
      - name: kdata
        nodeId: lab-n1
        storageClass: lvm
        sizeBytes: 1073741824
`)
	p, text, _, err := l.planFor(t, src)
	if !slices.ContainsFunc(p.Blocking, func(b planIssue) bool { return b.Code == "storage-class-mismatch" && b.Node == "lab-n1" }) {
		t.Fatalf("plan of a volume on lab-n1: err %v, blocking %+v; want storage-class-mismatch on lab-n1\n%s", err, p.Blocking, text)
	}
	t.Logf("refused as expected: %s", p.Blocking[0].Message)
}
