package schemas_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"testing"

	"kcore.dev/kcore/schemas"
)

func TestEmbeddedFiles(t *testing.T) {
	want := []string{"clusterupdate.json", "gitsource.json", "kubernetescluster.json", "node.json", "nodestate.json"}
	if got := schemas.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, name := range want {
		data, err := schemas.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := fs.Stat(schemas.FS(), name); err != nil {
			t.Errorf("FS: %v", err)
		}
	}
	if _, err := schemas.Read("missing.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing.json) = %v, want fs.ErrNotExist", err)
	}
}
