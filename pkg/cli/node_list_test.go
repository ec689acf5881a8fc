package cli

import (
	"strings"
	"testing"
)

// TestNodeList: registered nodes are listed with their facts, against a real
// controller (the plan's fix hints point users at this command).
func TestNodeList(t *testing.T) {
	a := newApplyEnv(t)
	a.putNode("node-301", "192.168.43.31", true)
	out, stderr, err := a.runIn(strings.NewReader(""), "node", "list")
	if err != nil {
		t.Fatalf("kctl node list: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("no header:\n%s", out)
	}
	var row string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "node-301 ") {
			row = l
		}
	}
	f := strings.Fields(row)
	if len(f) < 8 || f[1] != "yes" || f[2] != "-" || f[3] != "node-301" || f[4] != "192.168.43.31" || f[5] != "node-301" || f[6] != "-" || !strings.Contains(row, "lvm:vg0 (400 GiB free)") {
		t.Fatalf("node-301's row = %q in:\n%s", row, out)
	}
}
