package server

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated route table in docs/security.md")

// Markers around the generated table in docs/security.md.
const (
	tableBegin = "<!-- BEGIN ROUTE TABLE: generated from pkg/server RouteTable by `go test ./pkg/server -run TestSecurityDocTable -update`; do not edit -->\n"
	tableEnd   = "<!-- END ROUTE TABLE -->\n"
)

func securityDoc() string { return filepath.Join("..", "..", "docs", "security.md") }

// routeTableMarkdown renders RouteTable as the role × action table of
// docs/security.md.
func routeTableMarkdown(routes []RouteInfo) string {
	var b strings.Builder
	b.WriteString("| Route | audit action | " + strings.Join(Roles(), " | ") + " | anonymous | answered by | audited | body limit |\n")
	b.WriteString("|---|---" + strings.Repeat("|:-:", len(Roles())+1) + "|---|---|--:|\n")
	for _, r := range routes {
		fmt.Fprintf(&b, "| `%s` | %s |", r.Pattern, r.Action)
		for _, role := range Roles() {
			cell := "–"
			for _, allowed := range r.Roles {
				if allowed == role {
					cell = "yes"
				}
			}
			if cell == "yes" && r.OwnNode && role == "node" {
				cell = "own id"
				if r.ExpiredNode {
					cell = "own id, even expired (grace)"
				}
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		anon, audit := "–", "refusals"
		if r.Anonymous {
			anon = "yes"
		}
		if r.Audit {
			audit = "every call"
		}
		fmt.Fprintf(&b, " %s | %s | %s | %s |\n", anon, r.Mode, audit, byteSize(r.MaxBody))
	}
	return b.String()
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// TestSecurityDocTable fails when the role × action table in
// docs/security.md differs from the routing table; regenerate it with
// go test ./pkg/server -run TestSecurityDocTable -update.
func TestSecurityDocTable(t *testing.T) {
	doc, err := os.ReadFile(securityDoc())
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := bytes.Cut(doc, []byte(tableBegin))
	_, after, ok2 := bytes.Cut(rest, []byte(tableEnd))
	if !ok1 || !ok2 {
		t.Fatalf("docs/security.md lacks the lines\n%s…\n%s", tableBegin, tableEnd)
	}
	got := string(before) + tableBegin + routeTableMarkdown(RouteTable()) + tableEnd + string(after)
	if *update {
		if err := os.WriteFile(securityDoc(), []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != string(doc) {
		t.Fatal("the route table in docs/security.md is stale: run go test ./pkg/server -run TestSecurityDocTable -update")
	}
}

// TestSecurityDocNamesRealTests: every test docs/security.md names as the
// proof of a defence exists.
func TestSecurityDocNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile(securityDoc())
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`").FindAllSubmatch(doc, -1) {
		named[string(m[1])] = false
	}
	if len(named) < 10 {
		t.Fatalf("docs/security.md names %d tests, want one per defence", len(named))
	}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
	err = filepath.WalkDir(filepath.Join("..", ".."), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != filepath.Join("..", "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			if _, ok := named[string(m[1])]; ok {
				named[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, found := range named {
		if !found {
			t.Errorf("docs/security.md names %s, which no test file declares", name)
		}
	}
}
