package tfprovider

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/manifest"
)

var update = flag.Bool("update", false, "rewrite the generated attribute tables in docs/terraform.md")

// Markers around the generated tables in docs/terraform.md.
const (
	tablesBegin = "<!-- BEGIN ATTRIBUTE TABLES: generated from the provider's schema by `go test ./pkg/tfprovider -run TestTerraformDocTables -update`; do not edit -->\n"
	tablesEnd   = "<!-- END ATTRIBUTE TABLES -->\n"
)

func terraformDoc() string { return filepath.Join("..", "..", "docs", "terraform.md") }

// valueName says what an attribute holds, in Terraform's words.
func valueName(v manifest.HCLValue) string {
	switch v {
	case manifest.HCLString:
		return "string"
	case manifest.HCLBool:
		return "bool"
	case manifest.HCLInt:
		return "number"
	case manifest.HCLStringList:
		return "list(string)"
	case manifest.HCLStringMap:
		return "map(string)"
	case manifest.HCLBlock:
		return "block"
	}
	return "blocks"
}

// cell makes a description fit one table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// attributeTables renders, per resource, every attribute and block with
// the manifest field it maps to.
func attributeTables(t *testing.T) string {
	var b strings.Builder
	for _, k := range []kind{clusterKind(), updateKind()} {
		ks, err := buildKindSchema(k.resource, k.schemaFile, k.what)
		if err != nil {
			t.Fatal(err)
		}
		d, err := newDescriber(k.schemaFile)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "### `%s`\n\n| attribute or block | manifest field (YAML) | type | | description |\n|---|---|---|---|---|\n", k.resource)
		var rows func(fields []manifest.HCLField, tfPrefix, fieldPrefix string, parent map[string]any)
		rows = func(fields []manifest.HCLField, tfPrefix, fieldPrefix string, parent map[string]any) {
			for _, f := range fields {
				n := d.node(parent, f.Path)
				tfName, fieldName := tfPrefix+f.Name, fieldPrefix+f.Path
				if f.Value == manifest.HCLBlockList {
					fieldName += "[]"
				}
				req := "optional"
				if f.Required {
					req = "required"
				}
				fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s |\n", tfName, fieldName, valueName(f.Value), req, cell(d.description(n)))
				if f.Fields != nil {
					rows(f.Fields, tfName+".", fieldName+".", n)
				}
			}
		}
		rows(ks.fields, "", "", d.root)
		var own []string
		for name := range ks.schema.Attributes {
			if !isField(ks.fields, name) {
				own = append(own, name)
			}
		}
		sort.Strings(own)
		for _, name := range own {
			a := ks.schema.Attributes[name]
			what := "optional"
			if a.IsComputed() {
				what = "computed"
			}
			fmt.Fprintf(&b, "| `%s` | (provider) | %s | %s | %s |\n", name, strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", a), "schema."), "Attribute")), what, cell(a.GetDescription()))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func isField(fields []manifest.HCLField, name string) bool {
	for _, f := range fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// spliceTables returns doc with the text between the table markers
// replaced by tables, and the text that was there.
func spliceTables(doc []byte, tables string) (out []byte, was string, err error) {
	before, rest, ok1 := bytes.Cut(doc, []byte(tablesBegin))
	_, after, ok2 := bytes.Cut(rest, []byte(tablesEnd))
	if !ok1 || !ok2 {
		return nil, "", fmt.Errorf("find the lines\n%s…\n%s", tablesBegin, tablesEnd)
	}
	was = string(rest[:len(rest)-len(after)-len(tablesEnd)])
	// A new slice: before shares doc's array with after, and appending to
	// it in place would overwrite after before it is copied.
	out = make([]byte, 0, len(before)+len(tablesBegin)+len(tables)+len(tablesEnd)+len(after))
	out = append(append(append(append(append(out, before...), tablesBegin...), tables...), tablesEnd...), after...)
	return out, was, nil
}

// TestSpliceTablesKeepsTheRest: regenerating longer tables keeps the text
// before and after them as it was.
func TestSpliceTablesKeepsTheRest(t *testing.T) {
	doc := []byte("head\n" + tablesBegin + "old\n" + tablesEnd + "\n## Tests\n\ntail text\n")
	out, was, err := spliceTables(doc, "a much longer table than the old one\n")
	if err != nil {
		t.Fatal(err)
	}
	if was != "old\n" {
		t.Errorf("tables were %q, want %q", was, "old\n")
	}
	want := "head\n" + tablesBegin + "a much longer table than the old one\n" + tablesEnd + "\n## Tests\n\ntail text\n"
	if string(out) != want {
		t.Errorf("spliced document:\n%s\nwant:\n%s", out, want)
	}
}

// TestTerraformDocTables fails when the attribute tables in
// docs/terraform.md differ from the schema; regenerate them with
// go test ./pkg/tfprovider -run TestTerraformDocTables -update.
func TestTerraformDocTables(t *testing.T) {
	doc, err := os.ReadFile(terraformDoc())
	if err != nil {
		t.Fatal(err)
	}
	want := attributeTables(t)
	out, got, err := spliceTables(doc, want)
	if err != nil {
		t.Fatalf("docs/terraform.md: %v", err)
	}
	if got == want {
		return
	}
	if !*update {
		t.Fatalf("docs/terraform.md's attribute tables are stale; run go test ./pkg/tfprovider -run TestTerraformDocTables -update")
	}
	if err := os.WriteFile(terraformDoc(), out, 0o644); err != nil {
		t.Fatal(err)
	}
}
