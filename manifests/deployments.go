package manifests

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// Deployment names a Deployment a rendered manifest creates and the labels
// that select its pods: what a health check reads back from the cluster,
// taken from the manifest so that the names live in one place.
type Deployment struct {
	// Namespace and Name name the Deployment.
	Namespace, Name string
	// MatchLabels is its spec.selector.matchLabels.
	MatchLabels map[string]string
	// Replicas is its spec.replicas (1 when unset).
	Replicas int
}

// String is namespace/name.
func (d Deployment) String() string { return d.Namespace + "/" + d.Name }

// Deployments returns the Deployments of a rendered manifest in the order
// they appear.
func Deployments(manifest string) ([]Deployment, error) {
	dec := yaml.NewDecoder(strings.NewReader(manifest))
	var out []Deployment
	for n := 0; ; n++ {
		var doc struct {
			Kind     string `yaml:"kind"`
			Metadata struct {
				Name      string `yaml:"name"`
				Namespace string `yaml:"namespace"`
			} `yaml:"metadata"`
			Spec struct {
				Replicas *int `yaml:"replicas"`
				Selector struct {
					MatchLabels map[string]string `yaml:"matchLabels"`
				} `yaml:"selector"`
			} `yaml:"spec"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read deployments: document %d: %w", n, err)
		}
		if doc.Kind != "Deployment" {
			continue
		}
		d := Deployment{Namespace: doc.Metadata.Namespace, Name: doc.Metadata.Name, MatchLabels: doc.Spec.Selector.MatchLabels, Replicas: 1}
		if d.Namespace == "" {
			d.Namespace = "default"
		}
		if doc.Spec.Replicas != nil {
			d.Replicas = *doc.Spec.Replicas
		}
		out = append(out, d)
	}
}
