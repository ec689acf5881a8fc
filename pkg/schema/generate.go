package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// Draft is the JSON Schema dialect of every generated document.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// BaseURL is where the schemas are published; a document's $id is BaseURL
// followed by its file name.
const BaseURL = "https://kcore.dev/schemas/"

// File is one generated schema document.
type File struct {
	// Kind is the canonical kind the schema describes, e.g. KubernetesCluster.
	Kind string
	// Name is the file name, the lowercased kind plus .json.
	Name string
	// Data is the document: sorted keys, 2-space indent, trailing newline.
	Data []byte
}

// kinds are the documents Generate produces, in order.
func kinds() []struct {
	kind string
	typ  reflect.Type
} {
	return []struct {
		kind string
		typ  reflect.Type
	}{
		{api.KindKubernetesCluster, reflect.TypeFor[api.KubernetesCluster]()},
		{api.KindClusterUpdate, reflect.TypeFor[api.ClusterUpdate]()},
		{api.KindNode, reflect.TypeFor[api.Node]()},
		{api.KindNodeState, reflect.TypeFor[api.NodeState]()},
		{api.KindGitSource, reflect.TypeFor[api.GitSource]()},
	}
}

// FileName is the schema file name of a canonical kind: kubernetescluster.json.
func FileName(kind string) string { return strings.ToLower(kind) + ".json" }

// Generate builds the schema of every kind. Field descriptions are the doc
// comments in apiDir, the source directory of pkg/api; a field without one is
// an error, so every field the schemas show is described.
func Generate(apiDir string) ([]File, error) {
	docs, err := loadDocs(apiDir)
	if err != nil {
		return nil, err
	}
	g := &generator{docs: docs, table: constraints(), used: map[string]bool{}}
	var out []File
	for _, k := range kinds() {
		s, err := g.object(k.kind, k.typ)
		if err != nil {
			return nil, fmt.Errorf("generate %s schema: %w", k.kind, err)
		}
		name := FileName(k.kind)
		s["$schema"] = Draft
		s["$id"] = BaseURL + name
		s["title"] = k.kind
		data, err := marshal(s)
		if err != nil {
			return nil, fmt.Errorf("generate %s schema: %w", k.kind, err)
		}
		out = append(out, File{Kind: k.kind, Name: name, Data: data})
	}
	var unused []string
	for path := range g.table {
		if !g.used[path] {
			unused = append(unused, path)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		return nil, fmt.Errorf("generate schemas: constraints for fields that do not exist: %s", strings.Join(unused, ", "))
	}
	return out, nil
}

// marshal encodes a schema with sorted keys (encoding/json sorts map keys),
// a 2-space indent, unescaped <, > and &, and a trailing newline.
func marshal(s map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type generator struct {
	docs  typeDocs
	table map[string]constraint
	used  map[string]bool
}

// object is the schema of a struct type; path is "Kind.json.path".
func (g *generator) object(path string, t reflect.Type) (map[string]any, error) {
	td, ok := g.docs[t.Name()]
	if !ok {
		return nil, fmt.Errorf("%s: type %s not found in the api source", path, t.Name())
	}
	props := map[string]any{}
	required := []string{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous {
			return nil, fmt.Errorf("%s: embedded field %s is not supported", path, f.Name)
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("%s: field %s.%s has no json name", path, t.Name(), f.Name)
		}
		comment := td.fields[f.Name]
		if comment == "" {
			return nil, fmt.Errorf("%s.%s: field %s.%s has no doc comment", path, name, t.Name(), f.Name)
		}
		fp := path + "." + name
		s, err := g.value(fp, f.Type)
		if err != nil {
			return nil, err
		}
		s["description"] = fieldDescription(comment, f.Name, name)
		if err := g.constrain(fp, s); err != nil {
			return nil, err
		}
		props[name] = s
		if !hasOpt(opts, "omitempty") && !hasOpt(opts, "omitzero") {
			required = append(required, name)
		}
	}
	s := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if td.doc != "" {
		s["description"] = td.doc
	}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s, nil
}

// value is the schema of any field type.
func (g *generator) value(path string, t reflect.Type) (map[string]any, error) {
	switch t.Kind() {
	case reflect.Pointer:
		return g.value(path, t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice:
		items, err := g.value(path+"[]", t.Elem())
		if err != nil {
			return nil, err
		}
		if err := g.constrain(path+"[]", items); err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: map key %s is not a string", path, t.Key())
		}
		vals, err := g.value(path+"[]", t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": vals}, nil
	case reflect.Struct:
		return g.object(path, t)
	}
	return nil, fmt.Errorf("%s: unsupported type %s", path, t)
}

// constrain adds the table's enum, default and minimum for path to s.
func (g *generator) constrain(path string, s map[string]any) error {
	c, ok := g.table[path]
	if !ok {
		return nil
	}
	g.used[path] = true
	if len(c.enum) > 0 {
		if s["type"] != "string" {
			return fmt.Errorf("%s: enum on a %v field", path, s["type"])
		}
		s["enum"] = c.enum
	}
	if c.def != nil {
		s["default"] = c.def
	}
	if c.minimum != nil {
		s["minimum"] = *c.minimum
	}
	return nil
}

func hasOpt(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}
