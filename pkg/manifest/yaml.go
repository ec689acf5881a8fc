package manifest

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/api"
)

// ParseYAML reads every document of a YAML file. Empty documents are skipped.
// Unknown fields, wrong types, unknown kinds and syntax errors are reported
// with the line they are on; a document is returned when it could be read at
// all, so that validation can still find the problems that follow.
func ParseYAML(filename string, data []byte) ([]*Document, Diagnostics) {
	var ds diags
	if line := yamlDepth(data); line > 0 {
		ds.errorf(Pos{File: filename, Line: line}, "", "%s", depthMessage())
		return nil, ds.list
	}
	var docs []*Document
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, msg := splitYAMLError(err)
			at := Pos{File: filename, Line: line}
			if line > 0 {
				at = locateYAMLError(filename, data, err, at)
			}
			ds.errorf(at, "", "%s", msg)
			break
		}
		if doc := decodeYAMLDocument(filename, &root, &ds); doc != nil {
			docs = append(docs, doc)
		}
	}
	return docs, ds.list
}

// yamlErrorLine matches the "yaml: line N: …" form of yaml.v3 syntax errors,
// whose line is not otherwise exposed.
var yamlErrorLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

func splitYAMLError(err error) (int, string) {
	m := yamlErrorLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, err.Error()
	}
	line, _ := strconv.Atoi(m[1])
	return line, "invalid YAML: " + m[2]
}

// yamlDecoder fills one document's object from its node tree.
type yamlDecoder struct {
	file string
	doc  *Document
	ds   *diags
}

func decodeYAMLDocument(file string, root *yaml.Node, ds *diags) *Document {
	n := root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	n = resolveAlias(n)
	if n == nil || isNull(n) {
		return nil
	}
	at := Pos{File: file, Line: n.Line}
	if n.Kind != yaml.MappingNode {
		ds.errorf(at, "", "a manifest document must be a mapping with kind, metadata and spec, got %s", describe(n))
		return nil
	}
	kind, kindPos := "", at
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "kind" {
			kind, kindPos = n.Content[i+1].Value, Pos{File: file, Line: k.Line}
		}
	}
	canonical := api.CanonicalKind(kind)
	obj := newObject(canonical)
	if obj == nil {
		ds.errorf(kindPos, "kind", "%s", unknownKindMessage(kind))
		return nil
	}
	doc := &Document{Kind: canonical, Pos: at, Format: FormatYAML, Object: obj}
	y := &yamlDecoder{file: file, doc: doc, ds: ds}
	y.decode(n, reflect.ValueOf(obj).Elem(), "", 0)
	switch o := obj.(type) {
	case *api.KubernetesCluster:
		o.Kind = canonical
		y.checkAPIVersion(o.APIVersion)
		doc.Name = o.Metadata.Name
	case *api.ClusterUpdate:
		o.Kind = canonical
		y.checkAPIVersion(o.APIVersion)
		doc.Name = o.Metadata.Name
	}
	return doc
}

func (y *yamlDecoder) checkAPIVersion(v string) {
	if v != "" && v != api.APIVersion {
		y.ds.errorf(y.doc.PosOf("apiVersion"), "apiVersion", "%q is not %s", v, api.APIVersion)
	}
}

func (y *yamlDecoder) pos(n *yaml.Node) Pos { return Pos{File: y.file, Line: n.Line} }

// decode fills v from n, reporting every mismatch under path.
func (y *yamlDecoder) decode(n *yaml.Node, v reflect.Value, path string, depth int) {
	at := y.pos(n)
	n = resolveAlias(n)
	if n == nil || isNull(n) {
		return
	}
	if depth > MaxDepth {
		y.ds.errorf(at, path, "%s", depthMessage())
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		y.decodeStruct(n, v, path, depth)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			y.typeError(at, path, "a list", n)
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, e := range n.Content {
			p := indexPath(path, i)
			y.doc.setPos(p, y.pos(e))
			y.decode(e, s.Index(i), p, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		y.decodeMap(n, v, path, depth)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		y.decode(n, p.Elem(), path, depth+1)
		v.Set(p)
	default:
		y.decodeScalar(n, v, path, at)
	}
}

func (y *yamlDecoder) decodeStruct(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind != yaml.MappingNode {
		y.typeError(y.pos(n), path, "a mapping", n)
		return
	}
	fields := fieldsOf(v.Type())
	byName := make(map[string]field, len(fields))
	for _, f := range fields {
		byName[f.name] = f
	}
	// Merge keys (<<: *anchor) first, so that keys written here override them.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMergeKey(n.Content[i]) {
			y.decodeMerge(n.Content[i+1], v, path, depth)
		}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			y.ds.errorf(y.pos(k), path, "a field name must be a plain string, got %s", describe(k))
			continue
		}
		name := k.Value
		if path == "" && name == "status" {
			continue
		}
		f, ok := byName[name]
		if !ok {
			y.ds.errorf(y.pos(k), path, "%s", unknownMessage("field", name, fieldNames(fields, false)))
			continue
		}
		if line, dup := seen[name]; dup {
			y.ds.errorf(y.pos(k), join(path, name), "duplicate field (first at line %d)", line)
			continue
		}
		seen[name] = k.Line
		p := join(path, name)
		y.doc.setPos(p, y.pos(k))
		y.decode(val, v.Field(f.index), p, depth+1)
	}
}

func (y *yamlDecoder) decodeMerge(n *yaml.Node, v reflect.Value, path string, depth int) {
	m := resolveAlias(n)
	if m != nil && m.Kind == yaml.SequenceNode {
		for _, e := range m.Content {
			y.decodeMerge(e, v, path, depth+1)
		}
		return
	}
	if depth > MaxDepth {
		y.ds.errorf(y.pos(n), path, "%s", depthMessage())
		return
	}
	y.decode(n, v, path, depth+1)
}

func (y *yamlDecoder) decodeMap(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind != yaml.MappingNode {
		y.typeError(y.pos(n), path, "a mapping", n)
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolveAlias(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			y.ds.errorf(y.pos(n.Content[i]), path, "a key must be a string")
			continue
		}
		e := reflect.New(v.Type().Elem()).Elem()
		y.doc.setPos(join(path, k.Value), y.pos(k))
		y.decode(val, e, join(path, k.Value), depth+1)
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), e)
	}
	v.Set(m)
}

func (y *yamlDecoder) decodeScalar(n *yaml.Node, v reflect.Value, path string, at Pos) {
	if n.Kind != yaml.ScalarNode {
		y.typeError(at, path, expectedName(v.Kind()), n)
		return
	}
	tag := n.ShortTag()
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if tag != "!!bool" || n.Decode(&b) != nil {
			y.typeError(at, path, "true or false", n)
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if tag != "!!int" || n.Decode(&i) != nil {
			y.typeError(at, path, "an integer", n)
			return
		}
		if v.OverflowInt(i) {
			y.ds.errorf(at, path, "%d is out of range", i)
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var u uint64
		if tag != "!!int" || n.Decode(&u) != nil {
			y.typeError(at, path, "a non-negative integer", n)
			return
		}
		if v.OverflowUint(u) {
			y.ds.errorf(at, path, "%d is out of range", u)
			return
		}
		v.SetUint(u)
	default:
		y.ds.errorf(at, path, "cannot read a %s field", v.Type())
	}
}

func (y *yamlDecoder) typeError(at Pos, path, want string, n *yaml.Node) {
	y.ds.errorf(at, path, "expected %s, got %s", want, describe(n))
}

func expectedName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	default:
		return "an integer"
	}
}

// describe names what a node holds for an error message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			return "the string " + quote(n.Value)
		}
		return n.Value
	default:
		return "an empty value"
	}
}

// resolveAlias follows *alias nodes to what they name.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < MaxDepth; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func isMergeKey(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!merge"
}
