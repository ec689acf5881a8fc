package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ErrUnknownImage is returned when the images file pins a constant this tool
// has no recipe for, or lacks one it has: the two must move together.
var ErrUnknownImage = errors.New("image without a recipe")

// ErrNotPinned is returned for a reference without an explicit registry and tag.
var ErrNotPinned = errors.New("image reference not fully pinned")

// pathEnv is the PATH upstream's Linux images set.
const pathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// capNetBindService is the security.capability extended attribute setcap
// cap_net_bind_service=+ep writes (vfs_cap_data revision 2, effective bit,
// CAP_NET_BIND_SERVICE = 10 permitted), as upstream's CoreDNS image carries it
// on /coredns so that user 65532 may bind port 53.
const capNetBindService = "\x01\x00\x00\x02" + // magic_etc: VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE
	"\x00\x04\x00\x00" + // permitted[0]: 1 << 10
	"\x00\x00\x00\x00" + // inheritable[0]
	"\x00\x00\x00\x00\x00\x00\x00\x00" // permitted[1], inheritable[1]

// recipe says how one image is made: which static binary goes where, what
// else its root filesystem holds, and its runtime configuration.
type recipe struct {
	// Const is the constant in the images file that pins its reference.
	Const string
	// Name is the image's short name: the binary's file name in -bin-dir
	// and the archive's base name.
	Name string
	// Path is where the binary goes in the image; empty for an image made
	// of its Base alone.
	Path string
	// Xattrs are extended attributes of the binary.
	Xattrs map[string]string
	// Applets links every busybox applet to the binary.
	Applets bool
	// Shell names a static shell in -bin-dir installed as /bin/sh in place
	// of busybox's applet (with Applets).
	Shell string
	// CACerts copies the host's CA bundle into /etc/ssl/certs.
	CACerts bool
	// Base names a Debian root filesystem, the tar <bin-dir>/<Base>.rootfs.tar
	// scripts/build-images.sh makes with mmdebstrap, laid down as the image's
	// first layer; the binary (if any) and Dirs go in a second. Without a
	// Base the image is one layer: the binary on a minimal root filesystem.
	Base string
	// Dirs are more directories the image holds (mode 0755).
	Dirs []string
	// Files are more files the image holds: each image path is read from a
	// path relative to -bin-dir, keeping its mode; a directory is copied
	// whole (regular files, directories and symlinks).
	Files map[string]string
	// Config is the image's runtime configuration.
	Config v1.Config
}

// recipes returns one recipe per image, following each upstream Dockerfile:
// Kubernetes' build/pause (USER 65535, ENTRYPOINT /pause), CoreDNS's
// (distroless static nonroot, USER 65532, setcap, ENTRYPOINT /coredns),
// the local-path provisioner's package/Dockerfile (binary in /usr/bin, CMD
// local-path-provisioner), Docker's busybox (applets in /bin, CMD sh) and
// kcore's echo server (USER 65532, ENTRYPOINT /echo).
func recipes() []recipe {
	return []recipe{
		{
			Const: "PauseImage", Name: "pause", Path: "/pause",
			Config: v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535", Env: []string{pathEnv}},
		},
		{
			Const: "CoreDNSImage", Name: "coredns", Path: "/coredns", CACerts: true,
			Xattrs: map[string]string{"security.capability": capNetBindService},
			Config: v1.Config{
				Entrypoint: []string{"/coredns"}, User: "65532:65532", WorkingDir: "/", Env: []string{pathEnv},
				ExposedPorts: map[string]struct{}{"53/tcp": {}, "53/udp": {}},
			},
		},
		{
			Const: "LocalPathProvisionerImage", Name: "local-path-provisioner", Path: "/usr/bin/local-path-provisioner",
			Config: v1.Config{Cmd: []string{"local-path-provisioner"}, Env: []string{pathEnv}},
		},
		{
			Const: "BusyboxImage", Name: "busybox", Path: "/bin/busybox", Applets: true,
			Config: v1.Config{Cmd: []string{"sh"}, Env: []string{pathEnv}},
		},
		{
			Const: "EchoImage", Name: "echo", Path: "/echo",
			Config: v1.Config{
				Entrypoint: []string{"/echo"}, User: "65532:65532", Env: []string{pathEnv},
				ExposedPorts: map[string]struct{}{"8080/tcp": {}},
			},
		},
	}
}

// Image sets: which recipes an images file pins (kcore-images -set).
const (
	// setLab is what kcore's clusters and the lab run (manifests/images.go).
	setLab = "lab"
	// setConformance is what the upstream conformance tests the lab runs
	// need (tests/conformance/images.go).
	setConformance = "conformance"
	// setCilium is what Cilium's chart runs (tests/cilium/images.go).
	setCilium = "cilium"
)

// ErrUnknownSet is returned for an image set this tool does not know.
var ErrUnknownSet = errors.New("unknown image set")

// recipesOf returns the recipes of one image set.
func recipesOf(set string) ([]recipe, error) {
	switch set {
	case setLab:
		return recipes(), nil
	case setConformance:
		return conformanceRecipes(), nil
	case setCilium:
		return ciliumRecipes(), nil
	}
	return nil, fmt.Errorf("read recipes of %q: %w", set, ErrUnknownSet)
}

// pinned is one image: its recipe and the reference the images file pins.
type pinned struct {
	recipe
	Ref string
}

// pinnedImages reads the images file (Go source declaring string constants)
// and pairs every recipe with its reference. Every recipe's constant must be
// there, fully pinned, and every constant ending in Image must have a recipe.
func pinnedImages(path string) ([]pinned, error) {
	return pinnedSet(path, recipes())
}

// pinnedSet pairs each of rs with its reference in the images file at path,
// under the rules of pinnedImages.
func pinnedSet(path string, rs []recipe) ([]pinned, error) {
	consts, err := stringConsts(path)
	if err != nil {
		return nil, err
	}
	var out []pinned
	known := map[string]bool{}
	for _, r := range rs {
		known[r.Const] = true
		ref, ok := consts[r.Const]
		if !ok {
			return nil, fmt.Errorf("read %s: %s not declared: %w", path, r.Const, ErrUnknownImage)
		}
		if err := checkPinned(ref); err != nil {
			return nil, fmt.Errorf("read %s: %s: %w", path, r.Const, err)
		}
		out = append(out, pinned{recipe: r, Ref: ref})
	}
	var extra []string
	for name := range consts {
		if strings.HasSuffix(name, "Image") && !known[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("read %s: %s: %w", path, strings.Join(extra, ", "), ErrUnknownImage)
	}
	return out, nil
}

// checkPinned accepts only host/path:tag with a dotted host, the form
// containerd stores an image under and kubelet asks for, so the name in a
// manifest and the name in the archive are the same string.
func checkPinned(ref string) error {
	host, rest, ok := strings.Cut(ref, "/")
	if !ok || !strings.Contains(host, ".") {
		return fmt.Errorf("check %q: no registry host: %w", ref, ErrNotPinned)
	}
	if strings.Contains(rest, "@") {
		return fmt.Errorf("check %q: digests are not built here: %w", ref, ErrNotPinned)
	}
	i := strings.LastIndex(rest, ":")
	if i <= 0 || i == len(rest)-1 {
		return fmt.Errorf("check %q: no tag: %w", ref, ErrNotPinned)
	}
	if host == "docker.io" && !strings.Contains(rest[:i], "/") {
		return fmt.Errorf("check %q: Docker Hub official images live under library/: %w", ref, ErrNotPinned)
	}
	return nil
}

// stringConsts returns every top-level string constant declared in a Go file.
func stringConsts(path string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse images file: %w", err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					return nil, fmt.Errorf("unquote %s in %s: %w", n.Name, path, err)
				}
				out[n.Name] = v
			}
		}
	}
	return out, nil
}
