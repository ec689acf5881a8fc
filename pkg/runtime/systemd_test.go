package runtime

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update): %v", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func etcdUnit() api.Unit {
	return api.Unit{
		Name:      "kcore-etcd",
		Argv:      []string{"etcd", "--name=node-105", "--data-dir=/var/lib/etcd", "--initial-cluster=node-105=https://192.168.40.105:2380"},
		Env:       map[string]string{"ETCD_UNSUPPORTED_ARCH": "", "GOMAXPROCS": "2"},
		InputHash: "sha256:aaa",
	}
}

func TestSystemdUnitFileGolden(t *testing.T) {
	tests := []struct {
		name   string
		unit   api.Unit
		binDir string
	}{
		{name: "etcd.service", unit: etcdUnit(), binDir: "/run/current-system/sw/bin"},
		{name: "cilium.service", unit: api.Unit{
			Name: "kcore-kubernetes-cilium", Oneshot: true, After: []string{"kcore-kube-apiserver"},
			Argv:      []string{"/usr/bin/cilium", "install", "--set", "devices[0]=enp6s0", "--set", `weird="quote" $VAR 100%`},
			InputHash: "sha256:bbb", Restart: api.RestartAlways,
		}},
		{name: "never.service", unit: api.Unit{Name: "kcore-once", Argv: []string{"true"}, Restart: api.RestartNever, InputHash: "h"}},
		{name: "containerd.service", unit: api.Unit{
			Name: "kcore-containerd", Argv: []string{"containerd", "--config", "/etc/containerd/config.toml"},
			Restart: api.RestartAlways, KillMode: api.KillModeProcess, InputHash: "sha256:ddd",
		}, binDir: "/run/current-system/sw/bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, SystemdUnitFile(tt.unit, tt.binDir))
		})
	}
}

func TestSystemdCommandSequences(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rec := execrun.NewRecorder()
	s := &Systemd{Root: root, Runner: rec}
	u := etcdUnit()
	steps := []struct {
		name    string
		do      func() (bool, error)
		changed bool
		want    []string
	}{
		{name: "new unit is enabled and started", do: func() (bool, error) { return s.Ensure(ctx, u) }, changed: true,
			want: []string{"systemctl daemon-reload", "systemctl enable --now kcore-etcd.service"}},
		{name: "unchanged unit runs nothing", do: func() (bool, error) { return s.Ensure(ctx, u) }},
		{name: "changed hash restarts", do: func() (bool, error) {
			u.InputHash = "sha256:ccc"
			return s.Ensure(ctx, u)
		}, changed: true,
			want: []string{"systemctl daemon-reload", "systemctl enable kcore-etcd.service", "systemctl restart kcore-etcd.service"}},
		{name: "changed file with the same hash only reloads", do: func() (bool, error) {
			u.Env = map[string]string{"GOMAXPROCS": "4"}
			return s.Ensure(ctx, u)
		}, want: []string{"systemctl daemon-reload"}},
		{name: "stop disables and removes", do: func() (bool, error) { return false, s.Stop(ctx, u.Name) },
			want: []string{"systemctl stop kcore-etcd.service", "systemctl disable kcore-etcd.service", "systemctl daemon-reload"}},
		{name: "stopping again runs nothing", do: func() (bool, error) { return false, s.Stop(ctx, u.Name) }},
	}
	for _, st := range steps {
		rec.Reset()
		changed, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if changed != st.changed {
			t.Errorf("%s: changed = %v", st.name, changed)
		}
		if got := rec.Commands(); strings.Join(got, "\n") != strings.Join(st.want, "\n") {
			t.Errorf("%s: commands\n%s\nwant\n%s", st.name, strings.Join(got, "\n"), strings.Join(st.want, "\n"))
		}
	}
	if _, err := os.Stat(filepath.Join(root, "etc/systemd/system/kcore-etcd.service")); !os.IsNotExist(err) {
		t.Fatalf("unit file left behind: %v", err)
	}
}

func TestSystemdListAndStatus(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rec := execrun.NewRecorder()
	s := &Systemd{Root: root, Runner: rec}
	if _, err := s.Ensure(ctx, etcdUnit()); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(root, "etc/systemd/system/sshd.service")
	if err := os.WriteFile(foreign, []byte("[Service]\nExecStart=/usr/sbin/sshd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := s.List(ctx)
	if err != nil || strings.Join(names, ",") != "kcore-etcd" {
		t.Fatalf("list = %v, %v (foreign units must not be listed)", names, err)
	}
	rec.OnStdout("systemctl show --property=ActiveState,SubState,MainPID,NRestarts,ExecMainStatus kcore-etcd.service",
		"ActiveState=active\nSubState=running\nMainPID=4242\nNRestarts=2\nExecMainStatus=0\n")
	st, err := s.Status(ctx, "kcore-etcd")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != StateRunning || st.PID != 4242 || st.Restarts != 2 || st.InputHash != "sha256:aaa" {
		t.Fatalf("status = %+v", st)
	}
	if _, err := s.Status(ctx, "sshd-nope"); err == nil {
		t.Fatal("status of an unmanaged unit")
	}
}

func TestParseSystemctlShow(t *testing.T) {
	tests := []struct {
		name    string
		oneshot bool
		out     string
		state   string
		ready   bool
	}{
		{name: "running service", out: "ActiveState=active\nSubState=running\nMainPID=1", state: StateRunning, ready: true},
		{name: "finished oneshot", oneshot: true, out: "ActiveState=active\nSubState=exited\nMainPID=0\nExecMainStatus=0", state: StateExited, ready: true},
		{name: "activating", out: "ActiveState=activating\nSubState=start", state: StateStarting},
		{name: "failed", out: "ActiveState=failed\nExecMainStatus=1", state: StateFailed},
		{name: "inactive after failure", out: "ActiveState=inactive\nExecMainStatus=2", state: StateFailed},
		{name: "inactive", out: "ActiveState=inactive\nExecMainStatus=0", state: StateStopped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseSystemctlShow("u", "h", tt.oneshot, tt.out)
			if st.State != tt.state || st.Ready() != tt.ready {
				t.Fatalf("state %s ready %v, want %s %v", st.State, st.Ready(), tt.state, tt.ready)
			}
		})
	}
}

func TestSystemdRetriesAfterAFailedStart(t *testing.T) {
	ctx := context.Background()
	rec := execrun.NewRecorder().OnExit("systemctl enable --now kcore-etcd.service", 1, "Failed to start")
	rec.On("systemctl enable --now kcore-etcd.service", execrun.Result{}, nil)
	s := &Systemd{Root: t.TempDir(), Runner: rec}
	if _, err := s.Ensure(ctx, etcdUnit()); err == nil {
		t.Fatal("failed start reported success")
	}
	rec.Reset()
	if changed, err := s.Ensure(ctx, etcdUnit()); err != nil || !changed {
		t.Fatalf("retry = %v, %v", changed, err)
	}
	if got := strings.Join(rec.Commands(), "|"); got != "systemctl daemon-reload|systemctl enable --now kcore-etcd.service" {
		t.Fatalf("retry commands %q", got)
	}
}
