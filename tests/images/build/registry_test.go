package main

import (
	"archive/tar"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// repoRoot is kcore's checkout, three levels above this module.
const repoRoot = "../../.."

// labCache is what build-images.sh fills: ${KCORE_CACHE:-~/.cache/kcore}.
func labCache(t *testing.T) string {
	t.Helper()
	if c := os.Getenv("KCORE_CACHE"); c != "" {
		return c
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skipf("no cache: %v", err)
	}
	return filepath.Join(home, ".cache", "kcore")
}

// builtImages skips unless root and every image is built, and returns them.
func builtImages(t *testing.T) (string, []pinned) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (the registry's data and containerd run as root, as in the lab)")
	}
	imgs, err := pinnedImages(filepath.Join(repoRoot, "manifests", "images.go"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(labCache(t), "images")
	for _, p := range imgs {
		if _, err := os.Stat(archivePath(dir, p)); err != nil {
			t.Skipf("images not built (scripts/build-images.sh): %v", err)
		}
	}
	if _, err := exec.LookPath("docker-registry"); err != nil {
		t.Skipf("docker-registry not installed (scripts/deps.sh): %v", err)
	}
	return dir, imgs
}

// freeAddr returns a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// registryScript runs scripts/lab-registry.sh with args.
func registryScript(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "scripts", "lab-registry.sh"), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lab-registry.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// startRegistry starts the lab registry on a free loopback port, pushes the
// built images into it and returns its address and directory.
func startRegistry(t *testing.T) (string, string) {
	t.Helper()
	dir, addr := t.TempDir(), freeAddr(t)
	registryScript(t, "start", dir, addr)
	t.Cleanup(func() { registryScript(t, "stop", dir) })
	registryScript(t, "push", dir, addr)
	return addr, dir
}

// TestRegistryServesBuiltImages starts docker-registry with the lab's TLS
// setup, pushes every built image and pulls each back through the path a
// containerd mirror asks for: same digest as the archive, an OCI manifest,
// linux/amd64, the recipe's entrypoint, command and user, the binary in the
// layer, and no answer to a client that does not trust the lab CA.
func TestRegistryServesBuiltImages(t *testing.T) {
	dir, imgs := builtImages(t)
	addr, reg := startRegistry(t)
	rt, err := transport(filepath.Join(reg, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range imgs {
		t.Run(p.Name, func(t *testing.T) {
			local, ref, err := readArchive(archivePath(dir, p), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if ref != p.Ref {
				t.Fatalf("archive names %s, want %s", ref, p.Ref)
			}
			m, err := mirrorRef(p.Ref, addr)
			if err != nil {
				t.Fatal(err)
			}
			img, err := remote.Image(m, remote.WithContext(ctx), remote.WithTransport(rt))
			if err != nil {
				t.Fatalf("pull %s: %v", m, err)
			}
			checkImage(t, p, local, img)
		})
	}
	t.Run("untrusted", func(t *testing.T) {
		m, err := mirrorRef(imgs[0].Ref, addr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = remote.Image(m, remote.WithContext(ctx))
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) {
			t.Fatalf("pull without the lab CA: %v, want an unknown authority", err)
		}
	})
}

func checkImage(t *testing.T, p pinned, local, pulled v1.Image) {
	t.Helper()
	want, err := local.Digest()
	if err != nil {
		t.Fatal(err)
	}
	got, err := pulled.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("pulled digest %s, archive %s", got, want)
	}
	mt, err := pulled.MediaType()
	if err != nil || mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s (%v), want %s", mt, err, types.OCIManifestSchema1)
	}
	cf, err := pulled.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	}
	if !reflect.DeepEqual(cf.Config.Entrypoint, p.Config.Entrypoint) || !reflect.DeepEqual(cf.Config.Cmd, p.Config.Cmd) || cf.Config.User != p.Config.User {
		t.Errorf("entrypoint %q cmd %q user %q, want %q %q %q", cf.Config.Entrypoint, cf.Config.Cmd, cf.Config.User,
			p.Config.Entrypoint, p.Config.Cmd, p.Config.User)
	}
	h := layerEntry(t, pulled, p.Path)
	if h == nil || h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 || h.Size == 0 {
		t.Fatalf("the layer lacks an executable %s: %+v", p.Path, h)
	}
	for k, v := range p.Xattrs {
		if h.PAXRecords["SCHILY.xattr."+k] != v {
			t.Errorf("%s lacks the %s attribute", p.Path, k)
		}
	}
}

// layerEntry returns the header of path in the image's only layer.
func layerEntry(t *testing.T, img v1.Image, path string) *tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if "/"+h.Name == path {
			return h
		}
	}
}
