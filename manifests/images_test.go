package manifests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// pinModules maps the images built from a Go module to the module:
// tests/images/<name>-<tag>/go.mod must require it at exactly the tag.
func pinModules() map[string]string {
	return map[string]string{
		"registry.k8s.io/coredns/coredns":          "github.com/coredns/coredns",
		"docker.io/rancher/local-path-provisioner": "github.com/rancher/local-path-provisioner",
	}
}

// builtImages returns what scripts/build-images.sh builds: the string
// constants ending in Image declared in this package's source, by name, the
// same way its tool (tests/images/build) reads them.
func builtImages(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING || !strings.HasSuffix(n.Name, "Image") {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[n.Name] = v
				}
			}
		}
	}
	return out
}

// renderedImages returns every image the rendered add-ons name, including the
// helper pod inside the provisioner's ConfigMap.
func renderedImages(t *testing.T) []string {
	t.Helper()
	dns, err := CoreDNS(DNS{ClusterIP: "10.96.0.10", ClusterDomain: "cluster.local", Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	lp, err := LocalPathProvisioner(Provisioner{StorageClassName: "local-path"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*image:\s*(\S+)\s*$`).FindAllStringSubmatch(dns+lp, -1) {
		seen[m[1]] = true
	}
	var out []string
	for ref := range seen {
		out = append(out, ref)
	}
	sort.Strings(out)
	return out
}

// TestRenderedImagesAreBuilt checks that every image the rendered manifests
// name is one the lab builds, character for character: a fully qualified
// reference pinned in this package (containerd stores and kubelet looks up
// images by exactly that string), whose source, when built from a Go module,
// is pinned at the same tag under tests/images/.
func TestRenderedImagesAreBuilt(t *testing.T) {
	built := map[string]bool{}
	for _, ref := range builtImages(t) {
		built[ref] = true
	}
	refs := renderedImages(t)
	if len(refs) < 3 {
		t.Fatalf("rendered images %v: want CoreDNS, the provisioner and its helper", refs)
	}
	for _, ref := range refs {
		if !built[ref] {
			t.Errorf("rendered image %q is not one scripts/build-images.sh builds (%v)", ref, builtImages(t))
			continue
		}
		repo, tag, ok := strings.Cut(ref, ":")
		host, _, _ := strings.Cut(repo, "/")
		if !ok || !strings.Contains(host, ".") {
			t.Errorf("rendered image %q: not registry/repository:tag", ref)
			continue
		}
		mod, ok := pinModules()[repo]
		if !ok {
			continue
		}
		gomod := filepath.Join("..", "tests", "images", filepath.Base(repo)+"-"+tag, "go.mod")
		b, err := os.ReadFile(gomod)
		if err != nil {
			t.Errorf("rendered image %q has no pinned source: %v", ref, err)
			continue
		}
		if !regexp.MustCompile(`(?m)^(require )?\s*` + regexp.QuoteMeta(mod+" "+tag) + `( // indirect)?$`).Match(b) {
			t.Errorf("%s does not require %s %s", gomod, mod, tag)
		}
	}
}

// TestImagesArePinned checks every image this package pins, rendered or not
// (the sandbox image, the lab's echo server), is fully qualified and tagged.
func TestImagesArePinned(t *testing.T) {
	imgs := builtImages(t)
	for _, c := range []string{"PauseImage", "CoreDNSImage", "LocalPathProvisionerImage", "BusyboxImage", "EchoImage"} {
		ref, ok := imgs[c]
		if !ok {
			t.Errorf("%s is not pinned", c)
			continue
		}
		host, rest, _ := strings.Cut(ref, "/")
		if !strings.Contains(host, ".") || !strings.Contains(rest, ":") || (host == "docker.io" && !strings.Contains(rest, "/")) {
			t.Errorf("%s = %q: want host/repository:tag", c, ref)
		}
	}
}
