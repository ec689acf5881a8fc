package manifest

import (
	"math/big"
	"reflect"
	"strconv"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// fieldError is a value that does not fit the field at path.
type fieldError struct{ path, msg string }

// assignCty stores an HCL value into a Go field, converting as Terraform does
// (a number where a string is expected is fine, "x" where a number is is not).
func assignCty(val cty.Value, v reflect.Value, path string) *fieldError {
	if val.IsNull() {
		return nil
	}
	if !val.IsWhollyKnown() {
		return &fieldError{path, "value is not known"}
	}
	val, _ = val.Unmark()
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := assignCty(val, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
	case reflect.String:
		s, err := convert.Convert(val, cty.String)
		if err != nil {
			return typeMismatch(path, "a string", val)
		}
		v.SetString(s.AsString())
	case reflect.Bool:
		b, err := convert.Convert(val, cty.Bool)
		if err != nil {
			return typeMismatch(path, "true or false", val)
		}
		v.SetBool(b.True())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := convert.Convert(val, cty.Number)
		if err != nil {
			return typeMismatch(path, "an integer", val)
		}
		i, acc := n.AsBigFloat().Int64()
		if !n.AsBigFloat().IsInt() || acc != 0 || v.OverflowInt(i) {
			return &fieldError{path, "expected an integer in range, got " + formatNumber(n.AsBigFloat())}
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := convert.Convert(val, cty.Number)
		if err != nil {
			return typeMismatch(path, "a non-negative integer", val)
		}
		u, acc := n.AsBigFloat().Uint64()
		if !n.AsBigFloat().IsInt() || acc != 0 || v.OverflowUint(u) {
			return &fieldError{path, "expected a non-negative integer in range, got " + formatNumber(n.AsBigFloat())}
		}
		v.SetUint(u)
	case reflect.Slice:
		t := val.Type()
		if !t.IsListType() && !t.IsTupleType() && !t.IsSetType() {
			return typeMismatch(path, "a list", val)
		}
		s := reflect.MakeSlice(v.Type(), 0, val.LengthInt())
		i := 0
		for it := val.ElementIterator(); it.Next(); i++ {
			_, e := it.Element()
			s = reflect.Append(s, reflect.Zero(v.Type().Elem()))
			if err := assignCty(e, s.Index(i), indexPath(path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Map:
		t := val.Type()
		if !t.IsMapType() && !t.IsObjectType() {
			return typeMismatch(path, "a map", val)
		}
		m := reflect.MakeMapWithSize(v.Type(), val.LengthInt())
		for it := val.ElementIterator(); it.Next(); {
			k, e := it.Element()
			ev := reflect.New(v.Type().Elem()).Elem()
			if err := assignCty(e, ev, join(path, k.AsString())); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k.AsString()).Convert(v.Type().Key()), ev)
		}
		v.Set(m)
	default:
		return &fieldError{path, "cannot set a " + v.Type().String() + " field"}
	}
	return nil
}

// formatNumber prints a number for an error message. Printing one with a huge
// exponent in decimal takes seconds, so those are only described.
func formatNumber(f *big.Float) string {
	if f.IsInf() {
		return "an infinite number"
	}
	if exp := f.MantExp(nil); exp > 128 || exp < -128 {
		return "a number of magnitude 2^" + strconv.Itoa(exp)
	}
	return f.Text('g', -1)
}

func typeMismatch(path, want string, val cty.Value) *fieldError {
	got := val.Type().FriendlyName()
	if val.Type() == cty.String {
		got = "the string " + quote(val.AsString())
	}
	return &fieldError{path, "expected " + want + ", got " + got}
}
