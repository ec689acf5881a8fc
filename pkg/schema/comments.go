package schema

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// typeDocs are the doc comments of one Go package: per type, the type's own
// comment and each field's comment.
type typeDocs map[string]typeDoc

type typeDoc struct {
	doc    string
	fields map[string]string
}

// loadDocs parses the non-test Go files in dir and collects the doc comments
// of every type and struct field.
func loadDocs(dir string) (typeDocs, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read api source: %w", err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse api source: %w", err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("read api source: no Go files in %s", dir)
	}
	pkg, err := doc.NewFromFiles(fset, files, "kcore.dev/kcore/pkg/api", doc.AllDecls|doc.PreserveAST)
	if err != nil {
		return nil, fmt.Errorf("read api doc comments: %w", err)
	}
	out := typeDocs{}
	for _, t := range pkg.Types {
		td := typeDoc{doc: oneLine(t.Doc), fields: map[string]string{}}
		for _, spec := range t.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || ts.Name.Name != t.Name {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, f := range st.Fields.List {
				for _, n := range f.Names {
					td.fields[n.Name] = oneLine(f.Doc.Text())
				}
			}
		}
		out[t.Name] = td
	}
	return out, nil
}

// oneLine joins a comment's lines into one line of single-spaced words.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// fieldDescription turns a Go field comment into a schema description: a
// comment that starts with the Go field name starts with the JSON name
// instead, so "ClusterDNS is …" reads "clusterDns is …".
func fieldDescription(comment, goName, jsonName string) string {
	rest, ok := strings.CutPrefix(comment, goName)
	if !ok {
		return comment
	}
	if rest == "" || rest[0] == ' ' || rest[0] == ',' || rest == "." || strings.HasPrefix(rest, ". ") {
		return jsonName + rest
	}
	return comment
}
