package nixos

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/render"
)

func TestModulesParse(t *testing.T) {
	bin, err := exec.LookPath("nix-instantiate")
	if err != nil {
		t.Skip("SKIP: nix-instantiate not installed (apt-get install nix-bin); the NixOS modules were not checked")
	}
	modules, err := filepath.Glob("*.nix")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"kcore-controller.nix", "kcore-kubernetes.nix", "kcore-node-agent.nix"}
	if strings.Join(modules, ",") != strings.Join(want, ",") {
		t.Fatalf("modules %v, want %v", modules, want)
	}
	for _, m := range modules {
		t.Run(m, func(t *testing.T) {
			out, err := exec.Command(bin, "--parse", m).CombinedOutput()
			if err != nil {
				t.Fatalf("nix-instantiate --parse %s: %v\n%s", m, err, out)
			}
		})
	}
}

func TestModulesNameTheReferenceUnits(t *testing.T) {
	data, err := os.ReadFile("kcore-kubernetes.nix")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"kcore-kubernetes-cilium"`, `"kcore-kubernetes-provisioner"`, `"kcore_api"`, `"/etc/kcore/node-state.json"`, "restartTriggers = [ u.inputHash ]",
		// keepalived reloads a new configuration, keeping the VIP.
		"reloadTriggers = lib.optional (u ? reloadHash) u.reloadHash", "kill -HUP $MAINPID",
		// kcore-containerd's shims and containers outlive its restarts.
		`KillMode = if (u.killMode or "") == "process"`, "!config.virtualisation.containerd.enable",
		// The Cilium oneshot installs the chart from where the renderer says.
		`"L+ ` + render.CiliumChartDir + ` - - - - ${cfg.ciliumChart}"`} {
		if !strings.Contains(string(data), s) {
			t.Errorf("kcore-kubernetes.nix lacks %s", s)
		}
	}
	agent, err := os.ReadFile("kcore-node-agent.nix")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(agent), `KillMode = "process"`) {
		t.Error("the agent service must not kill the supervisor's processes on restart")
	}
}
