package manifests

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Kinds of Workload.
const (
	KindDeployment = "Deployment"
	KindDaemonSet  = "DaemonSet"
)

// Workload names a Deployment or DaemonSet a manifest creates and the
// labels that select its pods: what a health check reads back from the
// cluster, taken from the manifest so that the names live in one place.
type Workload struct {
	// Kind is KindDeployment or KindDaemonSet.
	Kind string
	// Namespace and Name name the object.
	Namespace, Name string
	// MatchLabels is its spec.selector.matchLabels.
	MatchLabels map[string]string
	// Replicas is a Deployment's spec.replicas (1 when unset); 0 for a
	// DaemonSet, whose count is the nodes it runs on, and for a workload
	// named without its manifest.
	Replicas int
}

// String is namespace/name.
func (w Workload) String() string { return w.Namespace + "/" + w.Name }

// Deployments returns the Deployments of a rendered manifest in the order
// they appear.
func Deployments(manifest string) ([]Workload, error) {
	return Workloads(manifest, KindDeployment)
}

// Workloads returns the objects of a manifest of the kinds given (both when
// none is), in the order they appear.
func Workloads(manifest string, kinds ...string) ([]Workload, error) {
	if len(kinds) == 0 {
		kinds = []string{KindDeployment, KindDaemonSet}
	}
	dec := yaml.NewDecoder(strings.NewReader(manifest))
	var out []Workload
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
			return nil, fmt.Errorf("read workloads: document %d: %w", n, err)
		}
		if !slices.Contains(kinds, doc.Kind) {
			continue
		}
		w := Workload{Kind: doc.Kind, Namespace: doc.Metadata.Namespace, Name: doc.Metadata.Name, MatchLabels: doc.Spec.Selector.MatchLabels}
		if w.Namespace == "" {
			w.Namespace = "default"
		}
		if w.Kind == KindDeployment {
			w.Replicas = 1
			if doc.Spec.Replicas != nil {
				w.Replicas = *doc.Spec.Replicas
			}
		}
		out = append(out, w)
	}
}
