package manifest

import (
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"kcore.dev/kcore/pkg/api"
)

// metadataHCL are the metadata fields an HCL resource may set; the others are
// set by the controller.
func metadataHCL() []string { return []string{"name", "labels"} }

// ParseHCL reads every `resource "kcore_…" "NAME" { … }` block of an HCL file.
// Attributes are the snake_case forms of the YAML field names; struct fields
// are nested blocks and lists of structs are repeated blocks named in the
// singular (control_plane_node, worker_node, volume). metadata.name is the
// name attribute, or the block label when there is none.
func ParseHCL(filename string, data []byte) ([]*Document, Diagnostics) {
	var ds diags
	if off, msg := hclDepth(data); off >= 0 {
		ds.errorf(posAt(filename, data, off, true), "", "%s", msg)
		return nil, ds.list
	}
	f, hd := hclsyntax.ParseConfig(data, filename, hcl.InitialPos)
	addHCLDiags(&ds, hd)
	if hd.HasErrors() || f == nil {
		return nil, ds.list
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok || !numbersInRange(filename, data, &ds) {
		return nil, ds.list
	}
	for _, a := range sortedAttributes(body) {
		ds.errorf(hclPos(a.NameRange), "", "unexpected attribute %s: a manifest holds only resource blocks", quote(a.Name))
	}
	var docs []*Document
	for _, b := range body.Blocks {
		if doc := decodeResource(b, &ds); doc != nil {
			docs = append(docs, doc)
		}
	}
	return docs, ds.list
}

func decodeResource(b *hclsyntax.Block, ds *diags) *Document {
	if b.Type != "resource" {
		ds.errorf(hclPos(b.TypeRange), "", "unsupported block type %s: a manifest holds only resource blocks", quote(b.Type))
		return nil
	}
	if len(b.Labels) != 2 {
		ds.errorf(hclPos(b.TypeRange), "", "a resource block has two labels, its type and its name, e.g. resource %q \"lab\"", ResourceKubernetesCluster)
		return nil
	}
	kind := kindOfResource(b.Labels[0])
	if kind == "" {
		ds.errorf(hclPos(b.LabelRanges[0]), "", "%s", unknownMessage("resource type", b.Labels[0], hclResources()))
		return nil
	}
	obj := newObject(kind)
	doc := &Document{Kind: kind, Pos: hclPos(b.DefRange()), Format: FormatHCL, Object: obj}
	h := &hclDecoder{doc: doc, ds: ds}
	doc.setPos("kind", hclPos(b.LabelRanges[0]))
	doc.setPos("metadata", doc.Pos)
	doc.setPos("spec", doc.Pos)
	switch o := obj.(type) {
	case *api.KubernetesCluster:
		o.Kind = kind
	case *api.ClusterUpdate:
		o.Kind = kind
	}
	targets, meta := resourceTargets(obj)
	first := len(ds.list)
	h.body(b.Body, targets)
	for i := first; i < len(ds.list); i++ {
		ds.list[i].Path = doc.FieldPath(ds.list[i].Path)
	}
	if meta.Name == "" {
		meta.Name = b.Labels[1]
		doc.setPos("metadata.name", hclPos(b.LabelRanges[1]))
	}
	doc.Name = meta.Name
	return doc
}

// maxExponentDigits bounds number literals: converting 1e99999999 to a string
// or an integer takes cty minutes, and no manifest needs such a number.
const maxExponentDigits = 4

// numbersInRange reports every number literal with an exponent too large to
// evaluate quickly, and whether there was none.
func numbersInRange(filename string, data []byte, ds *diags) bool {
	tokens, _ := hclsyntax.LexConfig(data, filename, hcl.InitialPos)
	ok := true
	for _, t := range tokens {
		if t.Type != hclsyntax.TokenNumberLit {
			continue
		}
		lit := string(t.Bytes)
		if i := strings.IndexAny(lit, "eE"); i >= 0 && len(strings.TrimLeft(lit[i+1:], "+-")) > maxExponentDigits {
			ds.errorf(hclPos(t.Range), "", "number %s is out of range", lit)
			ok = false
		}
	}
	return ok
}

// hclTarget is a field an HCL body may set.
type hclTarget struct {
	f field
	v reflect.Value
	// path is the field path (spec.controlPlaneNodes[1].advertiseAddress),
	// hclPath the same field as an HCL author names it
	// (control_plane_nodes[1].advertise_address).
	path, hclPath string
}

// resourceTargets lists what the body of a resource block may set into obj:
// the metadata fields of metadataHCL and every spec field, both written
// directly in the block. It is the one mapping from HCL attributes and
// blocks to field paths; FieldPath walks it backwards.
func resourceTargets(obj any) ([]hclTarget, *api.ObjectMeta) {
	var meta *api.ObjectMeta
	var spec reflect.Value
	switch o := obj.(type) {
	case *api.KubernetesCluster:
		meta, spec = &o.Metadata, reflect.ValueOf(&o.Spec).Elem()
	case *api.ClusterUpdate:
		meta, spec = &o.Metadata, reflect.ValueOf(&o.Spec).Elem()
	default:
		return nil, nil
	}
	var targets []hclTarget
	mv := reflect.ValueOf(meta).Elem()
	for _, f := range fieldsOf(mv.Type()) {
		if slices.Contains(metadataHCL(), f.name) {
			targets = append(targets, hclTarget{f: f, v: mv.Field(f.index), path: join("metadata", f.name), hclPath: f.hcl})
		}
	}
	return append(targets, structTargets(spec, "spec", "")...), meta
}

// hclName is how the target is written: its snake_case name, in the singular
// for a list of blocks.
func (t hclTarget) hclName() string {
	if t.f.typ.Kind() == reflect.Slice && isBlockType(t.f.typ) {
		return singular(t.f.hcl)
	}
	return t.f.hcl
}

// structTargets lists the fields of the struct v, whose field path is path
// and whose HCL path is hclPath.
func structTargets(v reflect.Value, path, hclPath string) []hclTarget {
	fields := fieldsOf(v.Type())
	out := make([]hclTarget, len(fields))
	for i, f := range fields {
		out[i] = hclTarget{f: f, v: v.Field(f.index), path: join(path, f.name), hclPath: join(hclPath, f.hcl)}
	}
	return out
}

type hclDecoder struct {
	doc *Document
	ds  *diags
}

// body fills targets from the attributes and blocks of b.
func (h *hclDecoder) body(b *hclsyntax.Body, targets []hclTarget) {
	var names []string
	byName := map[string]hclTarget{}
	for _, t := range targets {
		names = append(names, t.hclName())
		byName[t.hclName()] = t
	}
	for _, a := range sortedAttributes(b) {
		t, ok := byName[a.Name]
		switch {
		case !ok:
			h.ds.errorf(hclPos(a.NameRange), parentOf(targets), "%s", unknownMessage("attribute", a.Name, names))
		case isBlockType(t.f.typ):
			h.ds.errorf(hclPos(a.NameRange), t.path, "%s is a block: write %s { … }", a.Name, a.Name)
		default:
			h.attribute(a, t)
		}
	}
	seen := map[string]Pos{}
	for _, blk := range b.Blocks {
		t, ok := byName[blk.Type]
		at := hclPos(blk.TypeRange)
		switch {
		case !ok:
			h.ds.errorf(at, parentOf(targets), "%s", unknownMessage("block", blk.Type, names))
			continue
		case !isBlockType(t.f.typ):
			h.ds.errorf(at, t.path, "%s is an attribute: write %s = …", blk.Type, blk.Type)
			continue
		case len(blk.Labels) > 0:
			h.ds.errorf(hclPos(blk.LabelRanges[0]), t.path, "block %s takes no labels", blk.Type)
			continue
		}
		if t.f.typ.Kind() == reflect.Slice {
			i := t.v.Len()
			t.v.Set(reflect.Append(t.v, reflect.Zero(t.f.typ.Elem())))
			if i == 0 {
				h.doc.setPos(t.path, at)
			}
			p := indexPath(t.path, i)
			h.doc.setPos(p, at)
			h.body(blk.Body, structTargets(t.v.Index(i), p, indexPath(t.hclPath, i)))
			continue
		}
		if first, dup := seen[blk.Type]; dup {
			h.ds.errorf(at, t.path, "duplicate block %s (first at line %d)", blk.Type, first.Line)
			continue
		}
		seen[blk.Type] = at
		h.doc.setPos(t.path, at)
		target := t.v
		if target.Kind() == reflect.Pointer {
			// An optional block: present means set, even when empty.
			if target.IsNil() {
				target.Set(reflect.New(t.f.typ.Elem()))
			}
			target = target.Elem()
		}
		h.body(blk.Body, structTargets(target, t.path, t.hclPath))
	}
}

func (h *hclDecoder) attribute(a *hclsyntax.Attribute, t hclTarget) {
	h.doc.setPos(t.path, hclPos(a.NameRange))
	if tuple, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
		for i, e := range tuple.Exprs {
			h.doc.setPos(indexPath(t.path, i), hclPos(e.Range()))
		}
	}
	if obj, ok := a.Expr.(*hclsyntax.ObjectConsExpr); ok {
		for _, item := range obj.Items {
			if k, d := item.KeyExpr.Value(nil); !d.HasErrors() && k.Type() == cty.String && k.IsKnown() && !k.IsNull() {
				h.doc.setPos(join(t.path, k.AsString()), hclPos(item.KeyExpr.Range()))
			}
		}
	}
	val, d := a.Expr.Value(nil)
	addHCLDiags(h.ds, d)
	if d.HasErrors() {
		return
	}
	if err := assignCty(val, t.v, t.path); err != nil {
		h.ds.errorf(h.doc.PosOf(err.path), err.path, "%s", err.msg)
	}
}

// parentOf is the field path of the body the targets belong to.
func parentOf(targets []hclTarget) string {
	for _, t := range targets {
		if p := parentPath(t.path); p != "metadata" {
			return p
		}
	}
	return ""
}

func sortedAttributes(b *hclsyntax.Body) []*hclsyntax.Attribute {
	out := make([]*hclsyntax.Attribute, 0, len(b.Attributes))
	for _, a := range b.Attributes {
		out = append(out, a)
	}
	slices.SortFunc(out, func(x, y *hclsyntax.Attribute) int { return x.NameRange.Start.Byte - y.NameRange.Start.Byte })
	return out
}

func hclPos(r hcl.Range) Pos {
	return Pos{File: r.Filename, Line: r.Start.Line, Column: r.Start.Column}
}

func addHCLDiags(ds *diags, hd hcl.Diagnostics) {
	for _, d := range hd {
		var at Pos
		if d.Subject != nil {
			at = hclPos(*d.Subject)
			at.File = d.Subject.Filename
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		sev := api.SeverityError
		if d.Severity == hcl.DiagWarning {
			sev = api.SeverityWarning
		}
		ds.list = append(ds.list, Diagnostic{Pos: at, Severity: sev, Message: msg})
	}
}
