package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Markers around the generated table of the lab's Cilium values in
// docs/lab.md.
const (
	ciliumLabTableBegin = "<!-- BEGIN CILIUM LAB VALUES: generated from pkg/render's CiliumLabSettings by `go test ./pkg/render -run TestCiliumLabDocTable -update`; do not edit -->\n"
	ciliumLabTableEnd   = "<!-- END CILIUM LAB VALUES -->\n"
)

// TestCiliumLabDocTable keeps docs/lab.md's table of the chart values the
// lab profile adds equal to CiliumLabSettings; -update rewrites it.
func TestCiliumLabDocTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| value | why the lab sets it |\n|---|---|\n")
	for _, s := range CiliumLabSettings {
		fmt.Fprintf(&b, "| `%s` | %s |\n", s.Set, s.Why)
	}
	checkDocBlock(t, filepath.Join("..", "..", "docs", "lab.md"), ciliumLabTableBegin, ciliumLabTableEnd, b.String(), "TestCiliumLabDocTable")
}

// TestLabChartDirIsTheRenders: scripts/lab.sh installs the chart where the
// rendered Cilium oneshot looks for it.
func TestLabChartDirIsTheRenders(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "scripts", "lab.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nCILIUM_CHART_DIR=" + CiliumChartDir + "\n"; !strings.Contains(string(data), want) {
		t.Errorf("scripts/lab.sh does not set %q", strings.TrimSpace(want))
	}
}
