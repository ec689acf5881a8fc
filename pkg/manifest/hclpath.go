package manifest

import (
	"reflect"
	"strings"
)

// FieldPath names the field at fieldPath (a pkg/api field path such as
// spec.controlPlaneNodes[1].advertiseAddress, as in api.Issue) the way the
// document's author wrote it: unchanged for YAML, and for HCL as the
// attributes and blocks of the resource block
// (control_plane_nodes[1].advertise_address; metadata.name is name, and spec
// itself, the resource block, is ""). A path that names no field is returned
// unchanged.
func (d *Document) FieldPath(fieldPath string) string {
	if d == nil || d.Format != FormatHCL || fieldPath == "" {
		return fieldPath
	}
	if fieldPath == "spec" || fieldPath == "metadata" {
		return ""
	}
	obj := newObject(d.Kind)
	if obj == nil {
		return fieldPath
	}
	targets, _ := resourceTargets(obj)
	if p, ok := hclPathOf(targets, fieldPath); ok {
		return p
	}
	return fieldPath
}

// hclPathOf finds the target fieldPath names, or the target it is inside of,
// and translates the path: into a struct or a list of structs through the
// same targets the decoder uses, and verbatim below a map key, a list index
// of a list attribute or a scalar.
func hclPathOf(targets []hclTarget, fieldPath string) (string, bool) {
	for _, t := range targets {
		rest, ok := strings.CutPrefix(fieldPath, t.path)
		if !ok || (rest != "" && rest[0] != '.' && rest[0] != '[') {
			continue
		}
		typ := t.f.typ
		switch {
		case rest == "":
			return t.hclPath, true
		case typ.Kind() == reflect.Struct && rest[0] == '.':
			return hclPathOf(structTargets(reflect.New(typ).Elem(), t.path, t.hclPath), fieldPath)
		case typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.Struct && rest[0] == '.':
			return hclPathOf(structTargets(reflect.New(typ.Elem()).Elem(), t.path, t.hclPath), fieldPath)
		case typ.Kind() == reflect.Slice && isBlockType(typ) && rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return "", false
			}
			index := rest[:end+1]
			if rest = rest[end+1:]; rest == "" {
				return t.hclPath + index, true
			}
			elem := reflect.New(typ.Elem()).Elem()
			return hclPathOf(structTargets(elem, t.path+index, t.hclPath+index), fieldPath)
		default:
			return t.hclPath + rest, true
		}
	}
	return "", false
}
