package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPinnedImagesReadsTheRepository pairs every recipe with the reference
// manifests/images.go pins, each fully qualified.
func TestPinnedImagesReadsTheRepository(t *testing.T) {
	imgs, err := pinnedImages(filepath.Join(repoRoot, "manifests", "images.go"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range imgs {
		got[p.Name] = p.Ref
	}
	for name, prefix := range map[string]string{
		"pause":                  "registry.k8s.io/pause:",
		"coredns":                "registry.k8s.io/coredns/coredns:v",
		"local-path-provisioner": "docker.io/rancher/local-path-provisioner:v",
		"busybox":                "docker.io/library/busybox:",
		"echo":                   "docker.io/kcore/echo:",
	} {
		if !strings.HasPrefix(got[name], prefix) {
			t.Errorf("%s: %q, want %s…", name, got[name], prefix)
		}
	}
}

// TestPinnedImagesRefusesDrift refuses an images file that lacks a recipe's
// constant, pins one the tool cannot build, or pins a short reference.
func TestPinnedImagesRefusesDrift(t *testing.T) {
	full := func(extra string, skip string) string {
		var b strings.Builder
		b.WriteString("package manifests\n\nconst (\n")
		for _, r := range recipes() {
			if r.Const != skip {
				fmt.Fprintf(&b, "\t%s = \"example.org/%s:v1\"\n", r.Const, r.Name)
			}
		}
		b.WriteString(extra + ")\n")
		return b.String()
	}
	for _, tt := range []struct {
		name, src string
		want      error
	}{
		{"complete", full("", ""), nil},
		{"missing", full("", "EchoImage"), ErrUnknownImage},
		{"unknown", full("\tFooImage = \"example.org/foo:v1\"\n", ""), ErrUnknownImage},
		{"short", strings.Replace(full("", ""), `"example.org/busybox:v1"`, `"busybox"`, 1), ErrNotPinned},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "images.go")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := pinnedImages(path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// TestCheckPinned accepts host/path:tag only.
func TestCheckPinned(t *testing.T) {
	for ref, ok := range map[string]bool{
		"registry.k8s.io/pause:3.10":                 true,
		"docker.io/library/busybox:1.35.0":           true,
		"busybox":                                    false,
		"busybox:1.35.0":                             false,
		"rancher/local-path-provisioner:v0.0.30":     false,
		"docker.io/busybox:1.35.0":                   false,
		"registry.k8s.io/pause":                      false,
		"registry.k8s.io/pause@sha256:0123456789abc": false,
		"10.77.0.1:5000/pause:3.10":                  true,
	} {
		if err := checkPinned(ref); (err == nil) != ok {
			t.Errorf("checkPinned(%q) = %v, want ok=%v", ref, err, ok)
		}
	}
}

// TestArchiveRoundTrip writes an image to an archive and reads it back: same
// digest, the full reference, the file with its extended attribute.
func TestArchiveRoundTrip(t *testing.T) {
	r := recipes()[1] // CoreDNS: an entrypoint, a user and a file capability
	fs := rootfs{}
	fs.file(r.Path, 0o755, []byte("not really coredns"), r.Xattrs)
	img, err := image(r, fs, "")
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "coredns.oci.tar")
	const ref = "registry.k8s.io/coredns/coredns:v1.14.7"
	if err := writeArchive(img, ref, archive); err != nil {
		t.Fatal(err)
	}
	back, gotRef, err := readArchive(archive, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	got, _ := back.Digest()
	if gotRef != ref || got != want {
		t.Fatalf("read back %s %s, want %s %s", gotRef, got, ref, want)
	}
	checkImage(t, pinned{recipe: r, Ref: ref}, img, back)
}

// TestUntarBounds unpacks an archive of exactly maxArchiveEntries entries
// and refuses one more, and refuses an entry leaving the directory.
func TestUntarBounds(t *testing.T) {
	write := func(names ...string) string {
		path := filepath.Join(t.TempDir(), "a.tar")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		tw := tar.NewWriter(f)
		for _, n := range names {
			if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("blobs/f%d", i)
		}
		return out
	}
	if err := untar(write(names(maxArchiveEntries)...), t.TempDir()); err != nil {
		t.Fatalf("%d entries: %v", maxArchiveEntries, err)
	}
	if err := untar(write(names(maxArchiveEntries+1)...), t.TempDir()); !errors.Is(err, ErrBadArchive) {
		t.Fatalf("%d entries: %v, want ErrBadArchive", maxArchiveEntries+1, err)
	}
	if err := untar(write("../escape"), t.TempDir()); !errors.Is(err, ErrBadArchive) {
		t.Fatalf("../escape: %v, want ErrBadArchive", err)
	}
}

// TestCheckStatic refuses a dynamically linked binary.
func TestCheckStatic(t *testing.T) {
	if err := checkStatic("/bin/sh"); !errors.Is(err, ErrNotStatic) {
		t.Errorf("/bin/sh: %v, want ErrNotStatic", err)
	}
	if _, err := os.Stat("/bin/busybox"); err == nil {
		if err := checkStatic("/bin/busybox"); err != nil {
			t.Errorf("Debian's busybox-static: %v", err)
		}
	}
}
