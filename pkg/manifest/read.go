package manifest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// Parse reads one file's documents, choosing YAML (.yaml, .yml) or HCL (.hcl)
// by the file name's extension. Two documents of the same kind and name are an
// error.
func Parse(filename string, data []byte) ([]*Document, Diagnostics) {
	docs, ds := parseFile(filename, data)
	ds = append(ds, duplicates(docs)...)
	ds.Sort()
	return docs, ds
}

func parseFile(filename string, data []byte) ([]*Document, Diagnostics) {
	switch strings.ToLower(filepath.Ext(filename)) {
	case ".yaml", ".yml":
		return ParseYAML(filename, data)
	case ".hcl":
		return ParseHCL(filename, data)
	}
	var ds diags
	ds.errorf(Pos{File: filename}, "", "unsupported file type: want .yaml, .yml or .hcl")
	return nil, ds.list
}

// ReadPath reads a manifest file, or every *.yaml, *.yml and *.hcl file below a
// directory in lexical order, skipping dotfiles and dot-directories. It returns
// every document it could read and every problem it met: read errors, syntax
// errors, unknown fields and kinds, and documents of the same kind and name.
// It does not default or validate: see Check.
func ReadPath(path string) ([]*Document, Diagnostics) { return ReadPaths(path) }

// ReadPaths is ReadPath over several files or directories; a file reached
// twice is read once, and duplicates are found across all of them.
func ReadPaths(paths ...string) ([]*Document, Diagnostics) {
	var ds diags
	var docs []*Document
	read := map[string]bool{}
	for _, root := range paths {
		for _, file := range listFiles(root, &ds) {
			key := file
			if abs, err := filepath.Abs(file); err == nil {
				key = abs
			}
			if read[key] {
				continue
			}
			read[key] = true
			data, err := os.ReadFile(file)
			if err != nil {
				ds.errorf(Pos{File: file}, "", "read: %v", pathErr(err))
				continue
			}
			d, fd := parseFile(file, data)
			docs = append(docs, d...)
			ds.list = append(ds.list, fd...)
		}
	}
	ds.list = append(ds.list, duplicates(docs)...)
	ds.list.Sort()
	return docs, ds.list
}

// listFiles returns root when it is a file, else the manifest files below it.
func listFiles(root string, ds *diags) []string {
	info, err := os.Stat(root)
	if err != nil {
		ds.errorf(Pos{File: root}, "", "read: %v", pathErr(err))
		return nil
	}
	if !info.IsDir() {
		return []string{root}
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			ds.errorf(Pos{File: p}, "", "read: %v", pathErr(err))
			return nil
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && isManifestName(d.Name()) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		ds.errorf(Pos{File: root}, "", "read: %v", pathErr(err))
	}
	if len(files) == 0 {
		ds.errorf(Pos{File: root}, "", "no *.yaml, *.yml or *.hcl files in this directory")
	}
	return files
}

func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".hcl":
		return true
	}
	return false
}

// pathErr drops the path from an *fs.PathError: the diagnostic already names it.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// duplicates reports every document whose kind and name an earlier one
// already declared, naming both places.
func duplicates(docs []*Document) Diagnostics {
	var ds diags
	first := map[string]*Document{}
	for _, d := range docs {
		if d.Name == "" {
			continue
		}
		key := d.Kind + "/" + d.Name
		if f, ok := first[key]; ok {
			ds.errorf(d.PosOf("metadata.name"), d.FieldPath("metadata.name"), "%s %q is already declared at %s", d.Kind, d.Name, f.PosOf("metadata.name"))
			continue
		}
		first[key] = d
	}
	return ds.list
}

// Check defaults every document's object in place (api Default) and validates
// it (api Validate), warning about every written value defaulting replaces
// (api Overrides), and returning each finding at the position of its field path,
// the path named as the document writes it (FieldPath), sorted by file and line.
func Check(docs []*Document) Diagnostics {
	var out Diagnostics
	for _, d := range docs {
		var issues api.Issues
		switch o := d.Object.(type) {
		case *api.KubernetesCluster:
			issues = o.Overrides()
			o.Default()
			issues = append(issues, o.Validate()...)
		case *api.ClusterUpdate:
			o.Default()
			issues = o.Validate()
		}
		for _, is := range issues {
			out = append(out, Diagnostic{Pos: d.PosOf(is.Path), Severity: is.Severity, Path: d.FieldPath(is.Path), Message: is.Message})
		}
	}
	out.Sort()
	return out
}
