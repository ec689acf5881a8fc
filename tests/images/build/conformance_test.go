package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestConformanceSetReadsTheRepository pairs every conformance recipe with
// the reference tests/conformance/images.go pins: upstream's e2e names.
func TestConformanceSetReadsTheRepository(t *testing.T) {
	rs, err := recipesOf(setConformance)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := pinnedSet(filepath.Join(repoRoot, "tests", "conformance", "images.go"), rs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range imgs {
		got[p.Name] = p.Ref
	}
	for name, prefix := range map[string]string{
		"agnhost":           "registry.k8s.io/e2e-test-images/agnhost:",
		"agnhost-prev":      "registry.k8s.io/e2e-test-images/agnhost:",
		"busybox":           "registry.k8s.io/e2e-test-images/busybox:",
		"glibc-dns-testing": "registry.k8s.io/e2e-test-images/glibc-dns-testing:",
		"nginx":             "registry.k8s.io/e2e-test-images/nginx:",
		"pause":             "registry.k8s.io/pause:",
	} {
		if !strings.HasPrefix(got[name], prefix) {
			t.Errorf("%s: %q, want %s…", name, got[name], prefix)
		}
	}
	if got["agnhost"] == got["agnhost-prev"] {
		t.Errorf("agnhost and agnhost-prev share %s", got["agnhost"])
	}
	if _, err := recipesOf("other"); !errors.Is(err, ErrUnknownSet) {
		t.Errorf("recipesOf(other): %v, want ErrUnknownSet", err)
	}
	// The lab's images file lacks the conformance constants.
	if _, err := pinnedSet(filepath.Join(repoRoot, "manifests", "images.go"), rs); !errors.Is(err, ErrUnknownImage) {
		t.Errorf("conformance set from manifests/images.go: %v, want ErrUnknownImage", err)
	}
}

// TestImageOnBase lays a base root filesystem down first and the binary's
// layer over it, without the minimal image's users replacing the base's.
func TestImageOnBase(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "debian.rootfs.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	passwdData := []byte("root:x:0:0:root:/root:/bin/bash\n")
	if err := tw.WriteHeader(&tar.Header{Name: "etc/passwd", Mode: 0o644, Size: int64(len(passwdData)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(passwdData); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var r recipe
	for _, c := range conformanceRecipes() {
		if c.Name == "nginx" {
			r = c
		}
	}
	fs, err := buildRootfs(r, filepath.Join(dir, "no-binary"))
	if err != nil {
		t.Fatalf("build a base-only image's root filesystem: %v", err)
	}
	if _, ok := fs["/etc/passwd"]; ok {
		t.Fatal("an image on a base got the minimal /etc/passwd over the base's")
	}
	img, err := image(r, fs, base)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("%d layers, want the base and one more", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatal("the first layer is not the base root filesystem")
	}
	if _, err := image(r, fs, filepath.Join(dir, "missing.tar")); err == nil {
		t.Fatal("an image on a missing base was made")
	}
}

// TestBusyboxShellPassesOddEnvNames: the conformance busybox image's
// /bin/sh is the static shell its recipe names, not busybox's applet (every
// other applet still links to busybox), and that shell passes environment
// variables whose names are not shell identifiers on to what it runs, as
// upstream's ConfigMap and Secret tests (EnvFrom with "data-1") need;
// busybox's own sh drops them.
func TestBusyboxShellPassesOddEnvNames(t *testing.T) {
	var r recipe
	for _, c := range conformanceRecipes() {
		if c.Name == "busybox" {
			r = c
		}
	}
	if r.Shell == "" {
		t.Fatal("the conformance busybox recipe names no shell")
	}
	shell := "/bin/" + r.Shell
	if _, err := os.Stat(shell); err != nil {
		t.Skipf("SKIP: %s is not installed (scripts/deps.sh installs it)", shell)
	}
	dir := t.TempDir()
	for src, name := range map[string]string{"/bin/busybox": "busybox", shell: r.Shell} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Skipf("SKIP: %v (scripts/deps.sh installs busybox-static)", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := buildRootfs(r, filepath.Join(dir, "busybox"))
	if err != nil {
		t.Fatal(err)
	}
	sh, ok := fs[shellPath]
	want, _ := os.ReadFile(shell)
	if !ok || sh.Type != tar.TypeReg || !bytes.Equal(sh.Data, want) {
		t.Fatalf("%s in the image is %+v, want %s's content", shellPath, sh.Type, shell)
	}
	if ls := fs["/bin/ls"]; ls.Type != tar.TypeSymlink {
		t.Fatalf("/bin/ls is not busybox's applet link: %+v", ls.Type)
	}
	for bin, passes := range map[string]bool{filepath.Join(dir, r.Shell): true, filepath.Join(dir, "busybox"): false} {
		args := []string{"-c", "env"}
		if !passes {
			args = append([]string{"sh"}, args...)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"data-1=value-1", "PATH=/usr/bin:/bin"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		if got := strings.Contains(string(out), "data-1=value-1"); got != passes {
			t.Errorf("%s %v passes data-1 on: %v, want %v\n%s", bin, args, got, passes, out)
		}
	}
}
