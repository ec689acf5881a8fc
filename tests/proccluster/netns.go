package proccluster

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Bounds and names of a cluster's own network.
const (
	// NamePrefix starts the name of every namespace and link a cluster
	// makes; it is not the lab's kcore-lab prefix, so the two never meet.
	NamePrefix = "kcch-"
	// apiPort and raftPort are each replica's fixed ports: every replica
	// has its namespace's address to itself.
	apiPort  = 7443
	raftPort = 7444
	// firstHost is the last octet of replica 0's address; the bridge has
	// .1.
	firstHost = 10
	// maxSubnetTries bounds the search for a free private /24.
	maxSubnetTries = 32
	// nftTable names the table partitions add their rules to, in every
	// replica's namespace.
	nftTable = "kcch"
)

// Errors of a cluster's network.
var (
	// ErrNeedsRoot: network namespaces need root.
	ErrNeedsRoot = errors.New("network namespaces need root")
	// ErrNoSubnet: every private /24 drawn is in use on the host.
	ErrNoSubnet = errors.New("no free private subnet")
)

// network is a bridge in the host's namespace and, per replica, a network
// namespace whose eth0 is a veth into it. The host reaches every replica
// through the bridge, so clients need no namespace of their own;
// partitions are nftables rules in the replicas' namespaces that drop
// what comes from the other replicas, never what comes from the host.
type network struct {
	t      testing.TB
	id     string // NamePrefix + 6 hex digits, unique to the cluster
	subnet string // "10.A.B."
	ns     []string
}

// newNetwork makes the bridge and n namespaces and removes them when the
// test ends (registered before any process starts, so it runs after the
// processes were killed).
func newNetwork(t testing.TB, n int) *network {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("proccluster: %v", ErrNeedsRoot)
	}
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	nw := &network{t: t, id: NamePrefix + hex.EncodeToString(b[:])}
	used, err := hostRoutes()
	if err != nil {
		t.Fatal(err)
	}
	subnet, err := freeSubnet(used, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	nw.subnet = subnet
	t.Cleanup(nw.remove)
	br := nw.id + "b"
	steps := [][]string{
		{"link", "add", br, "type", "bridge"},
		{"addr", "add", nw.subnet + "1/24", "dev", br},
		{"link", "set", br, "up"},
	}
	for i := range n {
		name := fmt.Sprintf("%s-%d", nw.id, i)
		host, peer := fmt.Sprintf("%sh%d", nw.id, i), fmt.Sprintf("%sp%d", nw.id, i)
		nw.ns = append(nw.ns, name)
		steps = append(steps,
			[]string{"netns", "add", name},
			[]string{"link", "add", host, "type", "veth", "peer", "name", peer},
			[]string{"link", "set", host, "master", br},
			[]string{"link", "set", host, "up"},
			[]string{"link", "set", peer, "netns", name},
			[]string{"-n", name, "link", "set", peer, "name", "eth0"},
			[]string{"-n", name, "addr", "add", nw.addr(i) + "/24", "dev", "eth0"},
			[]string{"-n", name, "link", "set", "eth0", "up"},
			[]string{"-n", name, "link", "set", "lo", "up"},
		)
	}
	for _, s := range steps {
		if err := run(nil, "ip", s...); err != nil {
			t.Fatalf("proccluster network: %v", err)
		}
	}
	for _, name := range nw.ns {
		table := fmt.Sprintf("table inet %s {\n chain input { type filter hook input priority 0; policy accept; }\n}\n", nftTable)
		if err := nw.nft(name, table); err != nil {
			t.Fatalf("proccluster network: %v", err)
		}
	}
	return nw
}

// hostRoutes returns the host namespace's IPv4 addresses and routes, as
// ip prints them.
func hostRoutes() (string, error) {
	var used bytes.Buffer
	for _, args := range [][]string{{"-4", "addr"}, {"-4", "route"}} {
		if err := run(&used, "ip", args...); err != nil {
			return "", err
		}
	}
	return used.String(), nil
}

// freeSubnet draws 10.A.B.0/24 (A from 200 to 249) from rnd until one
// that used (hostRoutes) does not mention, at most maxSubnetTries times,
// and returns its prefix "10.A.B.".
func freeSubnet(used string, rnd io.Reader) (string, error) {
	for range maxSubnetTries {
		var b [2]byte
		if _, err := io.ReadFull(rnd, b[:]); err != nil {
			return "", fmt.Errorf("pick subnet: %w", err)
		}
		s := fmt.Sprintf("10.%d.%d.", 200+int(b[0])%50, b[1])
		if !strings.Contains(used, s) {
			return s, nil
		}
	}
	return "", fmt.Errorf("pick subnet: %w in %d tries", ErrNoSubnet, maxSubnetTries)
}

// addr is replica i's address.
func (nw *network) addr(i int) string { return fmt.Sprintf("%s%d", nw.subnet, firstHost+i) }

// ip is replica i's address, parsed.
func (nw *network) ip(i int) net.IP { return net.ParseIP(nw.addr(i)) }

// nft runs an nftables script in namespace name.
func (nw *network) nft(name, script string) error {
	cmd := exec.Command("ip", "netns", "exec", name, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft in %s: %w: %s", name, err, out)
	}
	return nil
}

// drop makes replica to drop every packet from replica from.
func (nw *network) drop(from, to int) error {
	return nw.nft(nw.ns[to], fmt.Sprintf("add rule inet %s input ip saddr %s drop\n", nftTable, nw.addr(from)))
}

// heal removes every partition rule of every replica.
func (nw *network) heal() error {
	var errs []error
	for _, name := range nw.ns {
		errs = append(errs, nw.nft(name, fmt.Sprintf("flush chain inet %s input\n", nftTable)))
	}
	return errors.Join(errs...)
}

// remove deletes the namespaces (their veths go with them) and the
// bridge, whatever state a failed test left them in.
// A step that failed half way may have left a host veth behind; those
// are removed too, and errors are only reported by a test that had not
// failed already.
func (nw *network) remove() {
	for i, name := range nw.ns {
		if err := run(nil, "ip", "netns", "del", name); err != nil && !nw.t.Failed() {
			nw.t.Errorf("remove network: %v", err)
		}
		_ = run(nil, "ip", "link", "del", fmt.Sprintf("%sh%d", nw.id, i))
	}
	if err := run(nil, "ip", "link", "del", nw.id+"b"); err != nil && !nw.t.Failed() {
		nw.t.Errorf("remove network: %v", err)
	}
}

// run runs name with args (argv, no shell), appending its stdout to out
// when out is set.
func run(out *bytes.Buffer, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return nil
}
