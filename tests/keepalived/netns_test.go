package keepalived

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// run runs argv and fails the test with its output on error.
func run(t *testing.T, argv ...string) string {
	t.Helper()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

// lab is a bridge in the root namespace and one namespace per node, each with
// a veth renamed eth0 inside it, addressed in 10.240.<net>.0/24.
type lab struct {
	bridge string
	ns     []string
	addrs  []string
}

// newLab creates the bridge and n namespaces; t.Cleanup removes them.
func newLab(t *testing.T, prefix string, subnet int, n int) *lab {
	l := &lab{bridge: prefix + "br"}
	run(t, "ip", "link", "add", l.bridge, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", l.bridge).Run() })
	run(t, "ip", "link", "set", l.bridge, "up")
	for i := 1; i <= n; i++ {
		ns := fmt.Sprintf("%sn%d", prefix, i)
		host, peer := fmt.Sprintf("%sh%d", prefix, i), fmt.Sprintf("%sp%d", prefix, i)
		addr := fmt.Sprintf("10.240.%d.%d", subnet, 10+i)
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
		run(t, "ip", "link", "add", host, "type", "veth", "peer", "name", peer)
		run(t, "ip", "link", "set", host, "master", l.bridge, "up")
		run(t, "ip", "link", "set", peer, "netns", ns)
		run(t, "ip", "-n", ns, "link", "set", peer, "name", "eth0")
		run(t, "ip", "-n", ns, "addr", "add", addr+"/24", "dev", "eth0")
		run(t, "ip", "-n", ns, "link", "set", "eth0", "up")
		run(t, "ip", "-n", ns, "link", "set", "lo", "up")
		l.ns = append(l.ns, ns)
		l.addrs = append(l.addrs, addr)
	}
	return l
}

// holders returns the indexes of the namespaces whose eth0 carries vip/24.
func (l *lab) holders(t *testing.T, vip string) []int {
	t.Helper()
	var out []int
	for i, ns := range l.ns {
		if strings.Contains(run(t, "ip", "-n", ns, "-4", "-o", "addr", "show", "dev", "eth0"), " "+vip+"/24 ") {
			out = append(out, i)
		}
	}
	return out
}

// waitHolder polls (20 s at most) until exactly one namespace holds vip and
// ok accepts it, and returns its index.
func (l *lab) waitHolder(t *testing.T, vip string, ok func(int) bool) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last []int
	for time.Now().Before(deadline) {
		last = l.holders(t, vip)
		if len(last) == 1 && ok(last[0]) {
			return last[0]
		}
		<-tick.C
	}
	t.Fatalf("VIP %s never settled on exactly one acceptable node; last holders %v", vip, last)
	return -1
}

// holdersNow is holders without running ip (a process per namespace is
// slow on a loaded machine): each namespace's eth0 addresses are read from
// a thread that enters it. A namespace that cannot be read counts as not
// holding the VIP.
func (l *lab) holdersNow(vip string) []int {
	var out []int
	for i, ns := range l.ns {
		if addrs, err := eth0Addrs(ns); err == nil && containsIP(addrs, vip) {
			out = append(out, i)
		}
	}
	return out
}

// eth0Addrs lists eth0's addresses in network namespace ns. The thread
// that enters ns is never unlocked, so it ends with its goroutine and no
// other goroutine runs in ns.
func eth0Addrs(ns string) ([]net.Addr, error) {
	type result struct {
		addrs []net.Addr
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		goruntime.LockOSThread()
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("enter %s: %w", ns, err)}
			return
		}
		ifc, err := net.InterfaceByName("eth0")
		if err != nil {
			ch <- result{err: err}
			return
		}
		addrs, err := ifc.Addrs()
		ch <- result{addrs, err}
	}()
	r := <-ch
	return r.addrs, r.err
}

// containsIP reports whether addrs holds vip.
func containsIP(addrs []net.Addr, vip string) bool {
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.String() == vip {
			return true
		}
	}
	return false
}
