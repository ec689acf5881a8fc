package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ErrUsage is returned for a command line this tool does not understand.
var ErrUsage = errors.New("usage: kcore-images refs|build|push [flags]")

// pushTimeout bounds pushing every image into the registry.
const pushTimeout = 5 * time.Minute

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(context.Background(), os.Args[1:], os.Stdout, log); err != nil {
		fmt.Fprintln(os.Stderr, "kcore-images:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		return ErrUsage
	}
	fl := flag.NewFlagSet(args[0], flag.ContinueOnError)
	images := fl.String("images", "manifests/images.go", "Go file pinning every image reference")
	binDir := fl.String("bin-dir", "", "directory holding one static binary per image, named for it (build)")
	out := fl.String("out", "", "directory the archives are written to (build) or read from (push)")
	registry := fl.String("registry", "", "HOST:PORT of the registry to push into (push)")
	ca := fl.String("ca", "", "PEM CA bundle the registry's certificate chains to (push)")
	set := fl.String("set", setLab, "image set the images file pins: lab, conformance or cilium")
	if err := fl.Parse(args[1:]); err != nil {
		return fmt.Errorf("parse flags: %w", err)
	}
	rs, err := recipesOf(*set)
	if err != nil {
		return err
	}
	imgs, err := pinnedSet(*images, rs)
	if err != nil {
		return err
	}
	switch args[0] {
	case "refs":
		for _, p := range imgs {
			fmt.Fprintf(stdout, "%s %s\n", p.Name, p.Ref)
		}
		return nil
	case "build":
		if *binDir == "" || *out == "" {
			return fmt.Errorf("build needs -bin-dir and -out: %w", ErrUsage)
		}
		return build(imgs, *binDir, *out, log)
	case "push":
		if *out == "" || *registry == "" || *ca == "" {
			return fmt.Errorf("push needs -out, -registry and -ca: %w", ErrUsage)
		}
		ctx, cancel := context.WithTimeout(ctx, pushTimeout)
		defer cancel()
		return push(ctx, imgs, *out, *registry, *ca, log)
	}
	return ErrUsage
}

// archivePath is where build writes an image and push reads it.
func archivePath(dir string, p pinned) string { return filepath.Join(dir, p.Name+".oci.tar") }

func build(imgs []pinned, binDir, out string, log *slog.Logger) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("make output directory: %w", err)
	}
	for _, p := range imgs {
		fs, err := buildRootfs(p.recipe, filepath.Join(binDir, p.Name))
		if err != nil {
			return fmt.Errorf("build %s: %w", p.Ref, err)
		}
		base := ""
		if p.Base != "" {
			base = filepath.Join(binDir, p.Base+".rootfs.tar")
		}
		img, err := image(p.recipe, fs, base)
		if err != nil {
			return fmt.Errorf("build %s: %w", p.Ref, err)
		}
		if err := writeArchive(img, p.Ref, archivePath(out, p)); err != nil {
			return fmt.Errorf("build %s: %w", p.Ref, err)
		}
		d, err := img.Digest()
		if err != nil {
			return fmt.Errorf("digest %s: %w", p.Ref, err)
		}
		log.Info("image written", "ref", p.Ref, "digest", d.String(), "archive", archivePath(out, p))
	}
	return nil
}

// transport trusts only the CA in caFile.
func transport(caFile string) (http.RoundTripper, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read registry CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("read registry CA %s: no certificate", caFile)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}

// mirrorRef is where ref lives in the registry at host: the same repository
// path and tag, the registry host replaced.
func mirrorRef(ref, host string) (name.Reference, error) {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", ref, err)
	}
	m, err := name.ParseReference(host+"/"+r.Context().RepositoryStr()+":"+r.Identifier(), name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("parse mirror of %s: %w", ref, err)
	}
	return m, nil
}

func push(ctx context.Context, imgs []pinned, dir, registry, caFile string, log *slog.Logger) error {
	rt, err := transport(caFile)
	if err != nil {
		return err
	}
	for _, p := range imgs {
		tmp, err := os.MkdirTemp("", "kcore-images-")
		if err != nil {
			return fmt.Errorf("make temporary directory: %w", err)
		}
		err = pushOne(ctx, p, dir, tmp, registry, rt, log)
		os.RemoveAll(tmp)
		if err != nil {
			return err
		}
	}
	return nil
}

func pushOne(ctx context.Context, p pinned, dir, tmp, registry string, rt http.RoundTripper, log *slog.Logger) error {
	img, ref, err := readArchive(archivePath(dir, p), tmp)
	if err != nil {
		return err
	}
	if ref != p.Ref {
		return fmt.Errorf("push %s: the archive holds %s (rebuild it): %w", p.Ref, ref, ErrBadArchive)
	}
	dest, err := mirrorRef(ref, registry)
	if err != nil {
		return err
	}
	if err := remote.Write(dest, img, remote.WithContext(ctx), remote.WithTransport(rt)); err != nil {
		return fmt.Errorf("push %s to %s: %w", ref, dest, err)
	}
	log.Info("image pushed", "ref", ref, "to", dest.String())
	return nil
}
