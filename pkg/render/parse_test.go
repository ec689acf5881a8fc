package render

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestRenderedFilesParse checks every YAML manifest, kubeconfig and
// component configuration parses as YAML with an apiVersion and kind, and
// the CNI config as JSON.
func TestRenderedFilesParse(t *testing.T) {
	for _, name := range []string{"lab", "bridge", "single", "lvm"} {
		_, states := renderCase(t, name, Options{Profile: ProfileLab})
		for id, ns := range states {
			for _, f := range ns.Files {
				switch {
				case strings.HasSuffix(f.Path, ".conflist"):
					var v map[string]any
					if err := json.Unmarshal([]byte(f.Content), &v); err != nil {
						t.Errorf("%s %s %s: %v", name, id, f.Path, err)
					}
				case strings.HasSuffix(f.Path, ".yaml") || strings.HasPrefix(f.Path, "/etc/kubernetes/") && strings.HasSuffix(f.Path, ".conf"):
					if err := parseYAMLDocs(f.Content); err != nil {
						t.Errorf("%s %s %s: %v", name, id, f.Path, err)
					}
				}
			}
		}
	}
}

func parseYAMLDocs(content string) error {
	dec := yaml.NewDecoder(strings.NewReader(content))
	for n := 0; ; n++ {
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) && n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
		if doc.APIVersion == "" || doc.Kind == "" {
			return errors.New("document without apiVersion or kind")
		}
	}
}
