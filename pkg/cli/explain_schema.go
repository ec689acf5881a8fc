package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/schemas"
)

// Explain errors, for errors.Is.
var (
	// ErrUnknownKind is returned by explain for a kind no schema describes.
	ErrUnknownKind = errors.New("unknown kind")
	// ErrUnknownField is returned by explain for a path no schema field matches.
	ErrUnknownField = errors.New("unknown field")
)

// schemaNode is the part of a generated JSON Schema that explain prints.
type schemaNode struct {
	Title                string                 `json:"title"`
	Type                 string                 `json:"type"`
	Description          string                 `json:"description"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	Items                *schemaNode            `json:"items"`
	Enum                 []any                  `json:"enum"`
	Default              any                    `json:"default"`
	Minimum              *json.Number           `json:"minimum"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
}

// mapValues is the schema of a map's values, or nil when the node is not a map.
func (n *schemaNode) mapValues() *schemaNode {
	raw := strings.TrimSpace(string(n.AdditionalProperties))
	if !strings.HasPrefix(raw, "{") {
		return nil
	}
	var v schemaNode
	if json.Unmarshal([]byte(raw), &v) != nil {
		return nil
	}
	return &v
}

// typeName is the kubectl-style type: string, []object, map[string]string.
func (n *schemaNode) typeName() string {
	switch {
	case n.Type == "array" && n.Items != nil:
		return "[]" + n.Items.typeName()
	case n.Type == "object" && n.Properties == nil:
		if v := n.mapValues(); v != nil {
			return "map[string]" + v.typeName()
		}
	}
	return n.Type
}

// fields is the node whose properties are this node's child fields: the node
// itself, or a list's element.
func (n *schemaNode) fields() *schemaNode {
	if n.Type == "array" && n.Items != nil {
		return n.Items.fields()
	}
	return n
}

func (n *schemaNode) isRequired(name string) bool {
	for _, r := range n.Required {
		if r == name {
			return true
		}
	}
	return false
}

func (n *schemaNode) sortedFields() []string {
	names := make([]string, 0, len(n.Properties))
	for name := range n.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// loadKindSchema finds the embedded schema whose title or kind values match
// kind, ignoring case, so kubernetes-cluster finds KubernetesCluster.
func loadKindSchema(kind string) (*schemaNode, error) {
	var titles []string
	for _, name := range schemas.Names() {
		data, err := schemas.Read(name)
		if err != nil {
			return nil, err
		}
		var root schemaNode
		if err := json.Unmarshal(data, &root); err != nil {
			return nil, fmt.Errorf("parse schema %s: %w", name, err)
		}
		titles = append(titles, root.Title)
		aliases := []any{root.Title}
		if k := root.Properties["kind"]; k != nil {
			aliases = append(aliases, k.Enum...)
		}
		for _, a := range aliases {
			if s, ok := a.(string); ok && strings.EqualFold(s, kind) {
				return &root, nil
			}
		}
	}
	return nil, fmt.Errorf("%w %q: known kinds are %s", ErrUnknownKind, kind, strings.Join(titles, ", "))
}

// lookup walks a dotted field path from the root; list elements are stepped
// into transparently, and a trailing [N] or [] on a segment is ignored. It
// returns the field, whether its parent requires it, and the canonical path.
func lookup(root *schemaNode, path []string) (*schemaNode, bool, string, error) {
	n, required, at := root, false, ""
	for _, seg := range path {
		name := seg
		if i := strings.IndexByte(seg, '['); i >= 0 {
			name = seg[:i]
		}
		parent := n.fields()
		where := at
		if where == "" {
			where = root.Title
		}
		if parent.Properties == nil {
			return nil, false, "", fmt.Errorf("%w: %s is a %s and has no field %q", ErrUnknownField, where, n.typeName(), name)
		}
		child, ok := parent.Properties[name]
		if !ok {
			return nil, false, "", fmt.Errorf("%w %q in %s; did you mean %q?", ErrUnknownField, name, where, closestField(name, parent.sortedFields()))
		}
		n, required = child, parent.isRequired(name)
		if at == "" {
			at = name
		} else {
			at += "." + name
		}
	}
	return n, required, at, nil
}

// closestField is the field nearest to name, for "did you mean".
func closestField(name string, fields []string) string {
	best, _ := manifest.Closest(name, fields)
	return best
}
