package tfprovider

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"kcore.dev/kcore/pkg/manifest"
)

// errUnknown is returned when a value is not known yet (it depends on
// another resource): no kcore plan can be computed from it.
var errUnknown = fmt.Errorf("value not known until apply")

// objectAttrs returns the attributes of an object value, nil for null.
func objectAttrs(v tftypes.Value) (map[string]tftypes.Value, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, errUnknown
	}
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		return nil, fmt.Errorf("read object: %w", err)
	}
	return m, nil
}

// toDocument turns a resource value into the manifest document it stands
// for ({"metadata": …, "spec": …} with the YAML/JSON field names), which
// decodes into the pkg/api object with encoding/json.
func toDocument(v tftypes.Value, fields []manifest.HCLField) (map[string]any, error) {
	m, err := fieldsToMap(v, fields)
	if err != nil {
		return nil, err
	}
	doc := map[string]any{}
	for k, val := range m {
		top, rest, _ := strings.Cut(k, ".")
		sub, _ := doc[top].(map[string]any)
		if sub == nil {
			sub = map[string]any{}
			doc[top] = sub
		}
		sub[rest] = val
	}
	return doc, nil
}

// decodeInto fills obj (a pointer to a pkg/api object) from a resource value.
func decodeInto(v tftypes.Value, fields []manifest.HCLField, obj any) error {
	doc, err := toDocument(v, fields)
	if err != nil {
		return err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode resource: %w", err)
	}
	if err := json.Unmarshal(b, obj); err != nil {
		return fmt.Errorf("decode resource: %w", err)
	}
	return nil
}

// fieldsToMap reads the fields of an object value into a map keyed by field
// path, leaving out null values.
func fieldsToMap(v tftypes.Value, fields []manifest.HCLField) (map[string]any, error) {
	attrs, err := objectAttrs(v)
	if err != nil || attrs == nil {
		return nil, err
	}
	out := map[string]any{}
	for _, f := range fields {
		fv, ok := attrs[f.Name]
		if !ok || fv.IsNull() {
			continue
		}
		if !fv.IsFullyKnown() {
			return nil, fmt.Errorf("%s: %w", f.Name, errUnknown)
		}
		val, err := fieldValue(fv, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if val != nil {
			out[f.Path] = val
		}
	}
	return out, nil
}

func fieldValue(fv tftypes.Value, f manifest.HCLField) (any, error) {
	switch f.Value {
	case manifest.HCLString:
		var s string
		err := fv.As(&s)
		return s, err
	case manifest.HCLBool:
		var b bool
		err := fv.As(&b)
		return b, err
	case manifest.HCLInt:
		var n big.Float
		if err := fv.As(&n); err != nil {
			return nil, err
		}
		return json.Number(n.Text('f', -1)), nil
	case manifest.HCLStringList:
		var list []tftypes.Value
		if err := fv.As(&list); err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, nil
		}
		out := make([]string, 0, len(list))
		for _, e := range list {
			var s string
			if err := e.As(&s); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	case manifest.HCLStringMap:
		var m map[string]tftypes.Value
		if err := fv.As(&m); err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, nil
		}
		out := make(map[string]string, len(m))
		for k, e := range m {
			var s string
			if err := e.As(&s); err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	case manifest.HCLBlock:
		return fieldsToMap(fv, f.Fields)
	case manifest.HCLBlockList:
		var list []tftypes.Value
		if err := fv.As(&list); err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, nil
		}
		out := make([]map[string]any, 0, len(list))
		for _, e := range list {
			m, err := fieldsToMap(e, f.Fields)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported field kind %d", f.Value)
}

// fromObject encodes a pkg/api object as its manifest document: a map of
// its JSON form, with numbers kept exact.
func fromObject(obj any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return m, nil
}

// lookup reads a dotted path (metadata.name) in a document.
func lookup(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, name := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[name]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// valueDoc is the manifest document of a resource value in the form
// fromObject returns (JSON types, exact numbers).
func valueDoc(v tftypes.Value, fields []manifest.HCLField) (map[string]any, error) {
	doc, err := toDocument(v, fields)
	if err != nil {
		return nil, err
	}
	return fromObject(doc)
}
