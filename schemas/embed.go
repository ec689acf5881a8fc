// Package schemas embeds the JSON Schemas (draft 2020-12) generated from
// pkg/api by `make schemas`: kubernetescluster.json, clusterupdate.json,
// node.json and nodestate.json. kctl explain reads them; editors can point at
// the files directly (see docs/schemas.md).
package schemas

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
)

//go:embed *.json
var files embed.FS

// FS returns the embedded schema files, at the root of the returned tree.
func FS() fs.FS { return files }

// Names returns the embedded file names, sorted.
func Names() []string {
	entries, err := files.ReadDir(".")
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// Read returns one embedded schema by file name, e.g. kubernetescluster.json.
func Read(name string) ([]byte, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", name, err)
	}
	return b, nil
}
