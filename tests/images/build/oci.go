package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations naming the image in an archive's index: the OCI one, and the
// one containerd's import reads first.
const (
	annotationRefName       = "org.opencontainers.image.ref.name"
	annotationContainerdRef = "io.containerd.image.name"
)

// Bounds on reading an archive back.
const (
	// maxArchiveEntries bounds the files one archive may hold.
	maxArchiveEntries = 64
	// maxArchiveBytes bounds one archive's unpacked size.
	maxArchiveBytes = 512 << 20
)

// ErrBadArchive is returned for an archive that is not one image this tool wrote.
var ErrBadArchive = errors.New("not a kcore image archive")

// image assembles one linux/amd64 OCI image of a single layer.
// base, when not empty, is the root filesystem tar laid down first.
func image(r recipe, fs rootfs, base string) (v1.Image, error) {
	layerTar, err := fs.tar()
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("make layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if base != "" {
		bl, err := tarball.LayerFromFile(base, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, fmt.Errorf("read base layer %s: %w", base, err)
		}
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:   bl,
			History: v1.History{Created: v1.Time{Time: time.Unix(0, 0).UTC()}, CreatedBy: "kcore-images base " + r.Base},
		})
		if err != nil {
			return nil, fmt.Errorf("append base layer: %w", err)
		}
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: time.Unix(0, 0).UTC()}, CreatedBy: "kcore-images build " + r.Name},
	})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config = r.Config
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set config: %w", err)
	}
	return img, nil
}

// writeArchive writes img as an OCI image layout in a tar at dest, its index
// naming it ref. It writes to a temporary file first, so dest is either the
// old archive or the complete new one.
func writeArchive(img v1.Image, ref, dest string) error {
	dir, err := os.MkdirTemp(filepath.Dir(dest), ".layout-")
	if err != nil {
		return fmt.Errorf("make layout directory: %w", err)
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	ann := map[string]string{annotationRefName: ref, annotationContainerdRef: ref}
	if err := p.AppendImage(img, layout.WithAnnotations(ann), layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"})); err != nil {
		return fmt.Errorf("write image to layout: %w", err)
	}
	tmp := dest + ".tmp"
	if err := tarDir(dir, tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("install archive: %w", err)
	}
	return nil
}

// tarDir writes the regular files and directories under dir into a tar at dest.
func tarDir(dir, dest string) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk layout: %w", err)
	}
	sort.Strings(names)
	f, err := os.Create(dest)
	if err != nil {
		return fmt.Errorf("create archive: %w", err)
	}
	tw := tar.NewWriter(f)
	for _, p := range names {
		if err := tarAdd(tw, dir, p); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("close archive: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close archive: %w", err)
	}
	return nil
}

func tarAdd(tw *tar.Writer, dir, p string) error {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return fmt.Errorf("name archive entry: %w", err)
	}
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("stat layout file: %w", err)
	}
	h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Size: st.Size()}
	if st.IsDir() {
		h.Name += "/"
		h.Mode, h.Typeflag, h.Size = 0o755, tar.TypeDir, 0
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("write archive header %s: %w", rel, err)
	}
	if st.IsDir() {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("read layout file: %w", err)
	}
	if _, err := tw.Write(b); err != nil {
		return fmt.Errorf("write archive entry %s: %w", rel, err)
	}
	return nil
}

// readArchive unpacks an archive into dir and returns its one image and the
// reference its index names it by.
func readArchive(archive, dir string) (v1.Image, string, error) {
	if err := untar(archive, dir); err != nil {
		return nil, "", err
	}
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, "", fmt.Errorf("read layout of %s: %w", archive, err)
	}
	m, err := ii.IndexManifest()
	if err != nil {
		return nil, "", fmt.Errorf("read index of %s: %w", archive, err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Annotations[annotationRefName] == "" {
		return nil, "", fmt.Errorf("read %s: want one named image, found %d: %w", archive, len(m.Manifests), ErrBadArchive)
	}
	d := m.Manifests[0]
	img, err := ii.Image(d.Digest)
	if err != nil {
		return nil, "", fmt.Errorf("read image of %s: %w", archive, err)
	}
	return img, d.Annotations[annotationRefName], nil
}

// untar unpacks the regular files and directories of an archive this tool
// wrote, refusing anything else and staying within the bounds.
func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return fmt.Errorf("open archive: %w", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read archive %s: %w", archive, err)
		}
		if n >= maxArchiveEntries {
			return fmt.Errorf("read archive %s: more than %d entries: %w", archive, maxArchiveEntries, ErrBadArchive)
		}
		name := filepath.Clean(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("read archive %s: entry %q: %w", archive, h.Name, ErrBadArchive)
		}
		dest := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dest, 0o755); err != nil {
				return fmt.Errorf("unpack archive: %w", err)
			}
		case tar.TypeReg:
			total += h.Size
			if total > maxArchiveBytes {
				return fmt.Errorf("read archive %s: more than %d bytes: %w", archive, maxArchiveBytes, ErrBadArchive)
			}
			if err := unpackFile(tr, dest, h.Size); err != nil {
				return err
			}
		default:
			return fmt.Errorf("read archive %s: entry %q of type %q: %w", archive, h.Name, string(h.Typeflag), ErrBadArchive)
		}
	}
}

func unpackFile(r io.Reader, dest string, size int64) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("unpack archive: %w", err)
	}
	out, err := os.Create(dest)
	if err != nil {
		return fmt.Errorf("unpack archive: %w", err)
	}
	if _, err := io.CopyN(out, r, size); err != nil {
		out.Close()
		return fmt.Errorf("unpack %s: %w", dest, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("unpack %s: %w", dest, err)
	}
	return nil
}
