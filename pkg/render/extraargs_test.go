package render

import (
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/render/kubeflags"
)

// TestExtraArgsRestartOnlyTheirUnit: an extraArgs change is in the argv and
// the input hash of its unit only, the same map renders the same argv, and
// extra flags come after kcore's own, sorted by name.
func TestExtraArgsRestartOnlyTheirUnit(t *testing.T) {
	c := loadCluster(t, "lab-ha3")
	base, err := Render(c, fakeSecrets(c), testFacts(), Options{KubernetesVersion: "1.37.0"})
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.APIServer.ExtraArgs = map[string]string{"event-ttl": "2h", "audit-log-maxage": "30"}
	got, err := Render(c, fakeSecrets(c), testFacts(), Options{KubernetesVersion: "1.37.0"})
	if err != nil {
		t.Fatal(err)
	}
	for id, ns := range got {
		for _, u := range ns.Units {
			old := unitByName(base[id], u.Name)
			changed := old == nil || old.InputHash != u.InputHash
			if changed != (u.Name == UnitAPIServer) {
				t.Errorf("%s %s: input hash changed = %v", id, u.Name, changed)
			}
			if u.Name != UnitAPIServer {
				continue
			}
			tail := u.Argv[len(u.Argv)-2:]
			if !slices.Equal(tail, []string{"--audit-log-maxage=30", "--event-ttl=2h"}) {
				t.Errorf("%s argv ends %v, want the extra flags sorted last", id, tail)
			}
			if !slices.Equal(u.Argv[:len(u.Argv)-2], old.Argv) {
				t.Errorf("%s: kcore's own flags changed with extraArgs", id)
			}
		}
	}
	for range 20 {
		again, err := Render(c, fakeSecrets(c), testFacts(), Options{KubernetesVersion: "1.37.0"})
		if err != nil {
			t.Fatal(err)
		}
		if Hash(again["node-105"]) != Hash(got["node-105"]) {
			t.Fatal("the same extraArgs rendered two different states")
		}
	}
}

// TestOwnedFlagsAreTheRenderedOnes: kubeflags.Owned, which validation
// refuses in extraArgs, lists exactly the flags the renderer puts on each
// unit's command line, and for the kubelet the flags of its configuration
// file's fields.
func TestOwnedFlagsAreTheRenderedOnes(t *testing.T) {
	c := loadCluster(t, "lab-ha3")
	states, err := Render(c, fakeSecrets(c), testFacts(), Options{KubernetesVersion: "1.37.0"})
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]string{
		kubeflags.APIServer: UnitAPIServer, kubeflags.ControllerManager: UnitControllerManager,
		kubeflags.Scheduler: UnitScheduler, kubeflags.Kubelet: UnitKubelet,
	}
	for comp, unit := range units {
		u := unitByName(states["node-105"], unit)
		var names []string
		for _, a := range u.Argv[1:] {
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			names = append(names, name)
		}
		if comp == kubeflags.Kubelet {
			for _, f := range kubeflags.KubeletConfig(kubeflags.KubeletConfigInputs{Lab: true}) {
				if f.Flag != "" {
					names = append(names, f.Flag)
				}
			}
		}
		slices.Sort(names)
		if owned := kubeflags.Owned(comp); !slices.Equal(names, owned) {
			t.Errorf("%s renders %v, kubeflags.Owned says %v", unit, names, owned)
		}
	}
}

// TestKubeletConfigFieldsAreListed: every field of the KubeletConfiguration
// the renderer writes (lab profile, which writes the most) comes from
// kubeflags.KubeletConfig, so its overriding flag is refused in extraArgs.
func TestKubeletConfigFieldsAreListed(t *testing.T) {
	c := loadCluster(t, "single")
	states, err := Render(c, fakeSecrets(c), testFacts(), Options{KubernetesVersion: "1.37.0", Profile: ProfileLab})
	if err != nil {
		t.Fatal(err)
	}
	var content string
	for _, f := range states["node-105"].Files {
		if f.Path == KubeletConfigPath {
			content = f.Content
		}
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(content), &doc); err != nil {
		t.Fatal(err)
	}
	var paths []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			paths = append(paths, prefix+k)
		}
	}
	walk("", doc)
	listed := []string{"apiVersion", "kind"}
	for _, f := range kubeflags.KubeletConfig(kubeflags.KubeletConfigInputs{Lab: true}) {
		listed = append(listed, f.Path)
	}
	slices.Sort(paths)
	slices.Sort(listed)
	if !slices.Equal(paths, listed) {
		t.Errorf("the rendered KubeletConfiguration has %v, kubeflags.KubeletConfig lists %v", paths, listed)
	}
}
