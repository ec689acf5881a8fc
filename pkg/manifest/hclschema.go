package manifest

import (
	"fmt"
	"reflect"
	"strings"
)

// HCLValue is the kind of value an HCLField holds.
type HCLValue int

// The values an HCLField holds.
const (
	// HCLString is a string attribute.
	HCLString HCLValue = iota + 1
	// HCLBool is a true/false attribute.
	HCLBool
	// HCLInt is an integer attribute.
	HCLInt
	// HCLStringList is a list of strings attribute.
	HCLStringList
	// HCLStringMap is a map of strings attribute.
	HCLStringMap
	// HCLBlock is one nested block (a struct field).
	HCLBlock
	// HCLBlockList is a repeated nested block (a list of structs), named in the singular.
	HCLBlockList
)

// HCLField is one attribute or block of a resource body as the HCL reader
// accepts it: the same walk over the pkg/api types (resourceTargets), so a
// tool that describes the resource from it (the Terraform provider, the
// docs) names exactly what the reader reads.
type HCLField struct {
	// Name is the attribute or block name as written in HCL (control_plane_node).
	Name string
	// Path is the field's path relative to its parent object, as in field
	// paths and YAML: metadata.name for the name attribute, spec.cni,
	// or controlPlaneNodes inside spec.
	Path string
	// Value is what the field holds.
	Value HCLValue
	// Required is set for fields whose json tag has no omitempty or
	// omitzero: the object is invalid without them.
	Required bool
	// Fields are the nested fields of a block or of each repeated block.
	Fields []HCLField
}

// HCLSchema lists the attributes and blocks of the body of a resource of
// the given HCL type (ResourceKubernetesCluster, ResourceClusterUpdate), in
// the order the reader documents them.
func HCLSchema(resource string) ([]HCLField, error) {
	kind := kindOfResource(resource)
	if kind == "" {
		return nil, fmt.Errorf("describe %s: %s", resource, unknownMessage("resource type", resource, hclResources()))
	}
	targets, _ := resourceTargets(newObject(kind))
	out := make([]HCLField, 0, len(targets))
	for _, t := range targets {
		f, err := describeField(t.f, t.path)
		if err != nil {
			return nil, fmt.Errorf("describe %s: %w", resource, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// describeField describes one field whose path (relative to the object) is path.
func describeField(f field, path string) (HCLField, error) {
	out := HCLField{Name: f.hcl, Path: path, Required: required(f)}
	t := f.typ
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case isBlockType(t):
		out.Value = HCLBlock
		st := t
		if t.Kind() == reflect.Slice {
			out.Value, out.Name, st = HCLBlockList, singular(f.hcl), t.Elem()
		}
		for _, sub := range fieldsOf(st) {
			d, err := describeField(sub, sub.name)
			if err != nil {
				return HCLField{}, err
			}
			out.Fields = append(out.Fields, d)
		}
		// A block of a struct is never required on its own: its fields say.
		out.Required = false
	case t.Kind() == reflect.String:
		out.Value = HCLString
	case t.Kind() == reflect.Bool:
		out.Value = HCLBool
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		out.Value = HCLInt
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		out.Value = HCLStringList
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String:
		out.Value = HCLStringMap
	default:
		return HCLField{}, fmt.Errorf("field %s: no HCL form for a %s", path, f.typ)
	}
	return out, nil
}

// required reports whether the field's json tag makes it required.
func required(f field) bool {
	_, opts, _ := strings.Cut(f.tag, ",")
	return !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero")
}
