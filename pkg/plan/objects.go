package plan

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxManifestObjects bounds how many Kubernetes objects objectChanges reads
// from one manifest file; a longer file is reported without its objects.
const MaxManifestObjects = 256

// objectChanges names the Kubernetes objects that differ between two
// versions of a rendered manifest (multi-document YAML), e.g. "changed
// Service kube-system/kube-dns". It returns nil for files that are not
// manifests (a document without kind and metadata.name), or that hold more
// than MaxManifestObjects documents.
func objectChanges(path, old, cur string) []string {
	if !strings.HasSuffix(path, ".yaml") {
		return nil
	}
	a, okA := manifestObjects(old)
	b, okB := manifestObjects(cur)
	if !okA || !okB {
		return nil
	}
	var out []string
	for _, k := range sortedKeys(b) {
		switch o, ok := a[k]; {
		case !ok:
			out = append(out, "added "+k)
		case o != b[k]:
			out = append(out, "changed "+k)
		}
	}
	for _, k := range sortedKeys(a) {
		if _, ok := b[k]; !ok {
			out = append(out, "removed "+k)
		}
	}
	return out
}

// manifestObjects maps "Kind namespace/name" (or "Kind name") to the
// object's canonical text.
func manifestObjects(text string) (map[string]string, bool) {
	out := map[string]string{}
	if text == "" {
		return out, true
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	// Each object may be followed by an empty document ("---" at the end).
	for range 2*MaxManifestObjects + 2 {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, true
		}
		if err != nil {
			return nil, false
		}
		if doc == nil {
			continue
		}
		if len(out) == MaxManifestObjects {
			return nil, false
		}
		kind, _ := doc["kind"].(string)
		meta, _ := doc["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if kind == "" || name == "" {
			return nil, false
		}
		if ns, _ := meta["namespace"].(string); ns != "" {
			name = ns + "/" + name
		}
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		if enc.Encode(doc) != nil {
			return nil, false
		}
		out[kind+" "+name] = buf.String()
	}
	return nil, false
}
