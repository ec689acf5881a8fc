package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Markers around the generated VIP timing table in docs/kubernetes.md.
const (
	vipTableBegin = "<!-- BEGIN VIP TABLE: generated from pkg/render's keepalived constants by `go test ./pkg/render -run TestVIPDocTable -update`; do not edit -->\n"
	vipTableEnd   = "<!-- END VIP TABLE -->\n"
)

// vipTableMarkdown renders the keepalived timing kcore renders, from the
// constants keepalivedConfig writes, with VRRP's derived intervals over
// the priorities Priority can give (1–254).
func vipTableMarkdown() string {
	adv := VRRPAdvertInterval.Seconds()
	skew := func(prio int) float64 { return float64(256-prio) * adv / 256 }
	var b strings.Builder
	b.WriteString("| keepalived | value | what it means |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| `vrrp_version` | %d | advertisement intervals in centiseconds (RFC 5798) |\n", VRRPVersion)
	fmt.Fprintf(&b, "| `advert_int` | %g s | the holder advertises this often, unicast to the other control planes |\n", adv)
	fmt.Fprintf(&b, "| Master_Down_Interval | 3 × %g s + Skew_Time = %.2f–%.2f s | a backup takes the VIP this long after the holder's last advertisement (a holder that died or lost its network) |\n",
		adv, 3*adv+skew(254), 3*adv+skew(1))
	fmt.Fprintf(&b, "| Skew_Time | (256 − priority) / 256 × %g s = %.3f–%.3f s | a backup takes the VIP this long after the holder's priority-0 advertisement (keepalived stopped, or its health script failed) |\n",
		adv, skew(254), skew(1))
	fmt.Fprintf(&b, "| `vrrp_priority` | %d | the VRRP process's nice value, the highest CPU priority, so a busy node advertises on time |\n", VRRPNice)
	fmt.Fprintf(&b, "| `vrrp_garp_master_delay`, `vrrp_higher_prio_send_advert` | %d s; on | a new holder sends its second set of gratuitous ARPs %d s after its first (keepalived's default is 5 s); when two nodes turn master at once, the one that yields advertises first, so the other sends its gratuitous ARPs again and the neighbours learn its MAC last |\n", VRRPGARPMasterDelaySeconds, VRRPGARPMasterDelaySeconds)
	checks := func(n int, what string) string {
		if n == 1 {
			return "1 " + what + " check"
		}
		return fmt.Sprintf("%d %s checks", n, what)
	}
	fmt.Fprintf(&b, "| health script | `/readyz` every %d s, each at most %d s; `rise %d`, `fall %d` | a node whose API server is not ready gives the VIP up after %s, and may hold it again after %s; a keepalived that starts counts its API server down until a check passes (`init_fail`) |\n",
		HealthCheckInterval, HealthCheckMaxTime, HealthCheckRise, HealthCheckFall, checks(HealthCheckFall, "failed"), checks(HealthCheckRise, "passed"))
	return b.String()
}

// TestVIPDocTable keeps the VIP timing table of docs/kubernetes.md equal to
// what the renderer writes; -update rewrites it.
func TestVIPDocTable(t *testing.T) {
	checkDocBlock(t, filepath.Join("..", "..", "docs", "kubernetes.md"), vipTableBegin, vipTableEnd, vipTableMarkdown(), "TestVIPDocTable")
}

// checkDocBlock keeps the text between the markers begin and end of the
// doc at path equal to want; -update rewrites it (test names the test that
// does, for the message).
func checkDocBlock(t *testing.T, path, begin, end, want, test string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no markers %q … %q", path, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	got := doc[i+len(begin) : j]
	if got == want {
		return
	}
	if !*update {
		t.Fatalf("the generated block in %s is stale (run go test ./pkg/render -run %s -update):\n--- doc\n%s\n--- code\n%s", path, test, got, want)
	}
	if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}
