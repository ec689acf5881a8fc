package tfprovider

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"kcore.dev/kcore/pkg/manifest"
)

// shapeMode says how valuesFrom combines a document with a shaping value.
type shapeMode int

const (
	// shapePlan keeps every value the configuration sets and fills the rest
	// from the document (what the controller will store); blocks are
	// present exactly where the configuration has them.
	shapePlan shapeMode = iota
	// shapeRead takes every value from the document (what is stored); a
	// single block absent from the shaping value (the prior state) stays
	// absent, so defaults inside blocks nobody wrote do not show as drift.
	shapeRead
	// shapeImport takes everything from the document; a single block is
	// present when the document has it.
	shapeImport
)

// valuesFrom builds the attribute values of fields (an object of type typ)
// from doc, shaped by shape.
func valuesFrom(doc map[string]any, fields []manifest.HCLField, typ tftypes.Object, shape tftypes.Value, mode shapeMode) (map[string]tftypes.Value, error) {
	shapeAttrs, err := objectAttrs(shape)
	if err != nil {
		return nil, err
	}
	out := make(map[string]tftypes.Value, len(fields))
	for _, f := range fields {
		t := typ.AttributeTypes[f.Name]
		sv, ok := shapeAttrs[f.Name]
		if !ok {
			sv = tftypes.NewValue(t, nil)
		}
		src, _ := lookup(doc, f.Path)
		v, err := fieldFrom(src, f, t, sv, mode)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		out[f.Name] = v
	}
	return out, nil
}

func fieldFrom(src any, f manifest.HCLField, t tftypes.Type, sv tftypes.Value, mode shapeMode) (tftypes.Value, error) {
	switch f.Value {
	case manifest.HCLBlock:
		ot, _ := t.(tftypes.Object)
		sub, _ := src.(map[string]any)
		switch {
		case mode == shapePlan && sv.IsNull(), mode == shapeRead && sv.IsNull(), mode == shapeImport && sub == nil:
			return tftypes.NewValue(t, nil), nil
		}
		if !sv.IsKnown() {
			return sv, nil
		}
		vals, err := valuesFrom(sub, f.Fields, ot, sv, mode)
		if err != nil {
			return tftypes.Value{}, err
		}
		return tftypes.NewValue(t, vals), nil
	case manifest.HCLBlockList:
		lt, _ := t.(tftypes.List)
		ot, _ := lt.ElementType.(tftypes.Object)
		srcList, _ := src.([]any)
		var shapeList []tftypes.Value
		if !sv.IsNull() && sv.IsKnown() {
			if err := sv.As(&shapeList); err != nil {
				return tftypes.Value{}, err
			}
		}
		if sv.IsNull() && (mode == shapePlan || len(srcList) == 0) {
			// No blocks where the configuration or state has none, in
			// whichever form (null or empty) it has that.
			return sv, nil
		}
		n := len(srcList)
		if mode == shapePlan {
			if !sv.IsKnown() {
				return sv, nil
			}
			n = len(shapeList)
		}
		elems := make([]tftypes.Value, 0, n)
		for i := range n {
			var sub map[string]any
			if i < len(srcList) {
				sub, _ = srcList[i].(map[string]any)
			}
			es := tftypes.NewValue(ot, nil)
			if i < len(shapeList) {
				es = shapeList[i]
			}
			vals, err := valuesFrom(sub, f.Fields, ot, es, mode)
			if err != nil {
				return tftypes.Value{}, err
			}
			elems = append(elems, tftypes.NewValue(ot, vals))
		}
		return tftypes.NewValue(t, elems), nil
	}
	if mode == shapePlan && !sv.IsNull() {
		return sv, nil
	}
	return leafFrom(src, f, t)
}

// leafFrom converts one JSON value to an attribute value; absent is null.
func leafFrom(src any, f manifest.HCLField, t tftypes.Type) (tftypes.Value, error) {
	if src == nil {
		return tftypes.NewValue(t, nil), nil
	}
	switch f.Value {
	case manifest.HCLString:
		s, ok := src.(string)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("expected a string, got %T", src)
		}
		return tftypes.NewValue(t, s), nil
	case manifest.HCLBool:
		b, ok := src.(bool)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("expected a bool, got %T", src)
		}
		return tftypes.NewValue(t, b), nil
	case manifest.HCLInt:
		n, ok := src.(json.Number)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("expected a number, got %T", src)
		}
		bf, _, err := big.ParseFloat(n.String(), 10, 512, big.ToNearestEven)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("parse number %s: %w", n, err)
		}
		return tftypes.NewValue(t, bf), nil
	case manifest.HCLStringList:
		list, ok := src.([]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("expected a list, got %T", src)
		}
		elems := make([]tftypes.Value, 0, len(list))
		for _, e := range list {
			s, _ := e.(string)
			elems = append(elems, tftypes.NewValue(tftypes.String, s))
		}
		return tftypes.NewValue(t, elems), nil
	case manifest.HCLStringMap:
		m, ok := src.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("expected a map, got %T", src)
		}
		elems := make(map[string]tftypes.Value, len(m))
		for k, e := range m {
			s, _ := e.(string)
			elems[k] = tftypes.NewValue(tftypes.String, s)
		}
		return tftypes.NewValue(t, elems), nil
	}
	return tftypes.Value{}, fmt.Errorf("unsupported field kind %d", f.Value)
}

// withAttrs returns base (an object) with the given attributes replaced.
func withAttrs(base tftypes.Value, set map[string]tftypes.Value) (tftypes.Value, error) {
	attrs, err := objectAttrs(base)
	if err != nil {
		return tftypes.Value{}, err
	}
	out := make(map[string]tftypes.Value, len(attrs)+len(set))
	for k, v := range attrs {
		out[k] = v
	}
	for k, v := range set {
		out[k] = v
	}
	return tftypes.NewValue(base.Type(), out), nil
}
