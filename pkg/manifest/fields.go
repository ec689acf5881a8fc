package manifest

import (
	"reflect"
	"strings"
	"unicode"
)

// field is one settable field of a pkg/api struct, named as in manifests.
type field struct {
	// name is the camelCase name from the yaml tag, as in YAML and field paths.
	name string
	// hcl is the snake_case form of name, as in HCL.
	hcl   string
	index int
	typ   reflect.Type
	// tag is the json tag, which says whether the field is required.
	tag string
}

// fieldsOf lists the manifest fields of a struct type, in declaration order,
// from its yaml tags. Fields tagged "-" or unexported are left out.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name[:1]) + f.Name[1:]
		}
		out = append(out, field{name: name, hcl: snakeCase(name), index: i, typ: f.Type, tag: f.Tag.Get("json")})
	}
	return out
}

func fieldNames(fs []field, hcl bool) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
		if hcl {
			names[i] = f.hcl
		}
	}
	return names
}

// snakeCase turns a camelCase tag into snake_case: apiServerEndpoint →
// api_server_endpoint, cephSha256 → ceph_sha256.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// singular names one HCL block of a list field: control_plane_nodes →
// control_plane_node, volumes → volume.
func singular(s string) string { return strings.TrimSuffix(s, "s") }

// isBlockType reports whether a field type is written as nested blocks in HCL
// (structs, optional structs and lists of structs) rather than as an attribute.
func isBlockType(t reflect.Type) bool {
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}
