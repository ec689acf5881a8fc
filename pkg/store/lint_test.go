package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestApplyIsDeterministic parses every non-test Go file of the package and
// fails if one reads the clock, draws randomness or touches the OS or the
// network: apply must give the same state on every replica.
func TestApplyIsDeterministic(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbiddenImports := map[string]bool{"math/rand": true, "math/rand/v2": true, "crypto/rand": true, "os": true, "net": true, "time": true}
	forbiddenSelectors := map[string]bool{"time.Now": true, "time.Since": true, "time.Until": true}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if forbiddenImports[path] {
				t.Errorf("%s: imports %q; store code must stay deterministic", fset.Position(imp.Pos()), path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			full := id.Name + "." + sel.Sel.Name
			if forbiddenSelectors[full] || id.Name == "os" || id.Name == "net" || id.Name == "rand" {
				t.Errorf("%s: uses %s; store code must stay deterministic", fset.Position(sel.Pos()), full)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no Go files checked")
	}
}
