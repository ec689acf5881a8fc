package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/manifests"
)

// The registry mirror the lab's nodes pull through (scripts/lab-registry.sh),
// and the node the mirror scenario cuts off from it.
const (
	mirrorHost     = labHost
	mirrorPort     = "5000"
	mirrorCutNode  = "n2"
	mirrorNFTTable = "kcore_e2e_mirror_cut"
	// mirrorTimeout bounds each wait of the scenario: health naming the
	// blocked pull, and CoreDNS available again after.
	mirrorTimeout = 3 * time.Minute
)

// testMirrorUnreachable: with the registry mirror unreachable from one node
// (an nftables reject in its namespace), CoreDNS's image removed from that
// node's containerd and the other nodes cordoned, a CoreDNS replica must be
// pulled there and cannot be: kctl kubernetes health names the node and the
// image. Reaching the mirror again heals it without a step of ours beyond
// uncordoning.
func testMirrorUnreachable(t *testing.T, l *lab) {
	cut := l.node(mirrorCutNode)
	ns := labNetns(cut.name)
	t.Cleanup(func() {
		_, _ = run(10*time.Second, nil, "ip", "netns", "exec", ns, "nft", "delete", "table", "inet", mirrorNFTTable)
		for _, n := range labNodes() {
			_, _ = l.kubectl("uncordon", n.id)
		}
	})
	rules := fmt.Sprintf("table inet %s {\n chain out {\n  type filter hook output priority 0;\n  ip daddr %s tcp dport %s reject with tcp reset\n }\n}\n", mirrorNFTTable, mirrorHost, mirrorPort)
	f := filepath.Join(t.TempDir(), "cut.nft")
	if err := os.WriteFile(f, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(10*time.Second, nil, "ip", "netns", "exec", ns, "nft", "-f", f); err != nil {
		t.Fatalf("cut %s off the mirror: %v\n%s", cut.id, err, out)
	}
	sock := filepath.Join(l.dir, cut.name, "run", "containerd", "containerd.sock")
	if out, err := run(30*time.Second, nil, filepath.Join(l.k8sBin, "ctr"), "--address", sock, "-n", "k8s.io", "images", "rm", manifests.CoreDNSImage); err != nil {
		t.Fatalf("remove %s from %s's containerd: %v\n%s", manifests.CoreDNSImage, cut.id, err, out)
	}
	for _, n := range labNodes() {
		if n.id != cut.id {
			if out, err := l.kubectl("cordon", n.id); err != nil {
				t.Fatalf("cordon %s: %v\n%s", n.id, err, out)
			}
		}
	}
	pods, err := l.kubectl("-n", "kube-system", "get", "pods", "-l", "k8s-app=kube-dns", "-o", "jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}")
	if err != nil {
		t.Fatal(err)
	}
	victim := ""
	for _, line := range strings.Split(strings.TrimSpace(pods), "\n") {
		name, node, _ := strings.Cut(line, " ")
		if victim == "" || node == cut.id {
			victim = name
		}
	}
	if victim == "" {
		t.Fatalf("no CoreDNS pod to move:\n%s", pods)
	}
	if out, err := l.kubectl("-n", "kube-system", "delete", "pod", victim, "--wait=false"); err != nil {
		t.Fatalf("delete CoreDNS pod %s: %v\n%s", victim, err, out)
	}
	var said string
	eventually(t, "health naming the node and the image it cannot pull", mirrorTimeout, func() error {
		said = l.healthOutput()
		for _, want := range []string{"image " + manifests.CoreDNSImage + " cannot be pulled on node " + cut.id} {
			if !strings.Contains(said, want) {
				return fmt.Errorf("health does not say %q:\n%s", want, said)
			}
		}
		return nil
	})
	t.Logf("with the mirror cut off from %s, health says:\n%s", cut.id, said)
	if out, err := run(10*time.Second, nil, "ip", "netns", "exec", ns, "nft", "delete", "table", "inet", mirrorNFTTable); err != nil {
		t.Fatalf("reconnect %s to the mirror: %v\n%s", cut.id, err, out)
	}
	for _, n := range labNodes() {
		if out, err := l.kubectl("uncordon", n.id); err != nil {
			t.Fatalf("uncordon %s: %v\n%s", n.id, err, out)
		}
	}
	eventually(t, "CoreDNS available and the cluster healthy again", mirrorTimeout, l.healthy)
}
