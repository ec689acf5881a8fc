package keepalived

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// checkScript exits non-zero when DIR/fail-<netns> exists, so the test can
// fail one node's API health check.
const checkScript = `#!/bin/sh
ns=$(%s netns identify)
[ ! -e "%s/fail-$ns" ]
`

func TestVIPFailover(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: keepalived failover test needs root (network namespaces, a bridge); run it as root")
	}
	keepalived, err := exec.LookPath("keepalived")
	if err != nil {
		t.Skip("SKIP: keepalived is not installed (apt-get install -y keepalived); the VIP failover test did not run")
	}
	ipBin, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("SKIP: iproute2 (ip) is not installed")
	}
	pid := os.Getpid()
	prefix := fmt.Sprintf("kc%d", pid%1000000)
	subnet := pid%250 + 1
	l := newLab(t, prefix, subnet, 3)
	vip := fmt.Sprintf("10.240.%d.200", subnet)

	// keepalived refuses scripts under directories others can write to
	// (enable_script_security), so the script lives in a private directory.
	dir, err := os.MkdirTemp("", "kcore-keepalived-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	script := filepath.Join(dir, "check-api")
	if err := os.WriteFile(script, fmt.Appendf(nil, checkScript, ipBin, dir), 0o755); err != nil {
		t.Fatal(err)
	}

	c := &api.KubernetesCluster{
		Metadata: api.ObjectMeta{Name: "vip"},
		Spec: api.ClusterSpec{
			ClusterCIDR:       "10.244.0.0/16",
			ServiceCIDR:       "10.96.0.0/12",
			APIServerEndpoint: vip + ":6443",
			HighAvailability:  api.HASpec{Enabled: true, VIPAddress: vip, VIPInterface: "eth0"},
		},
	}
	for i, addr := range l.addrs {
		c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes,
			api.ClusterNode{NodeID: fmt.Sprintf("cp-%d", i+1), AdvertiseAddress: addr, Iface: "eth0"})
	}
	c.Spec.ScheduleOnControlPlane = true
	c.Default()
	if errs := c.Validate().Errors(); len(errs) > 0 {
		t.Fatalf("test cluster invalid: %v", errs)
	}
	secrets, err := pki.IssueClusterSecrets(c, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	states, err := render.Render(c, secrets, nil, render.Options{HealthCheckCommand: script, RunDir: dir})
	if err != nil {
		t.Fatal(err)
	}

	procs := make([]*exec.Cmd, len(l.ns))
	for i, n := range c.Spec.ControlPlaneNodes {
		procs[i] = startKeepalived(t, keepalived, l.ns[i], dir, states[n.NodeID])
	}

	first := l.waitHolder(t, vip, func(int) bool { return true })
	t.Logf("VIP on %s", l.ns[first])

	stop(t, procs[first])
	second := l.waitHolder(t, vip, func(i int) bool { return i != first })
	t.Logf("keepalived on %s stopped: VIP moved to %s", l.ns[first], l.ns[second])

	if err := os.WriteFile(filepath.Join(dir, "fail-"+l.ns[second]), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	third := l.waitHolder(t, vip, func(i int) bool { return i != first && i != second })
	t.Logf("API health check failed on %s: VIP moved to %s", l.ns[second], l.ns[third])
}

// startKeepalived writes the node's rendered keepalived.conf into dir and
// runs the rendered unit's argv inside ns, with the config and pid paths
// moved into dir. The process group is killed on cleanup.
func startKeepalived(t *testing.T, bin, ns, dir string, state *api.NodeState) *exec.Cmd {
	t.Helper()
	var conf string
	for _, f := range state.Files {
		if f.Path == render.KeepalivedConfigPath {
			conf = f.Content
		}
	}
	var unit *api.Unit
	for i := range state.Units {
		if state.Units[i].Name == render.UnitKeepalived {
			unit = &state.Units[i]
		}
	}
	if conf == "" || unit == nil {
		t.Fatalf("%s: no keepalived config or unit rendered", state.NodeID)
	}
	confPath := filepath.Join(dir, state.NodeID+".conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := []string{"netns", "exec", ns, bin}
	for _, a := range unit.Argv[1:] {
		switch {
		case strings.HasPrefix(a, "--use-file="):
			a = "--use-file=" + confPath
		case strings.HasPrefix(a, "--pid="):
			a = "--pid=" + filepath.Join(dir, state.NodeID+".pid")
		case strings.HasPrefix(a, "--vrrp_pid="):
			a = "--vrrp_pid=" + filepath.Join(dir, state.NodeID+"-vrrp.pid")
		}
		argv = append(argv, a)
	}
	logPath := filepath.Join(dir, state.NodeID+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", argv...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start keepalived in %s: %v", ns, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			raw, _ := os.ReadFile(logPath)
			t.Logf("keepalived log of %s:\n%s", state.NodeID, raw)
		}
	})
	return cmd
}

// stop sends SIGTERM to keepalived (it releases the VIP on the way out) and
// waits for the whole process group to go.
func stop(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatalf("stop keepalived: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("keepalived did not exit within 20 s of SIGTERM")
	}
}
