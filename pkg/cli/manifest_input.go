package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/manifest"
)

// stdinPath is the -f value that reads manifests from standard input.
const stdinPath = "-"

// maxStdinManifest bounds what -f - reads from standard input.
const maxStdinManifest = 16 << 20

// readInputs reads the manifests -f names: files, directories and, for "-",
// standard input (once, however often "-" is given).
func readInputs(s Streams, paths []string) ([]*manifest.Document, manifest.Diagnostics) {
	var files []string
	stdin := false
	for _, p := range paths {
		if p == stdinPath {
			stdin = true
			continue
		}
		files = append(files, p)
	}
	var docs []*manifest.Document
	var ds manifest.Diagnostics
	if len(files) > 0 {
		docs, ds = manifest.ReadPaths(files...)
	}
	if stdin {
		d, more := readStdin(s.In)
		docs = append(docs, d...)
		ds = append(ds, more...)
	}
	return docs, ds
}

// readStdin parses standard input as HCL when its first statement is a
// resource block, as YAML otherwise; positions name the file "<stdin>".
func readStdin(in io.Reader) ([]*manifest.Document, manifest.Diagnostics) {
	if in == nil {
		in = strings.NewReader("")
	}
	data, err := io.ReadAll(io.LimitReader(in, maxStdinManifest+1))
	if err == nil && len(data) > maxStdinManifest {
		err = fmt.Errorf("more than %d bytes", maxStdinManifest)
	}
	if err != nil {
		return nil, manifest.Diagnostics{{Severity: api.SeverityError, Pos: manifest.Pos{File: "<stdin>"}, Message: "read standard input: " + err.Error()}}
	}
	if looksLikeHCL(data) {
		return manifest.ParseHCL("<stdin>", data)
	}
	return manifest.ParseYAML("<stdin>", data)
}

// looksLikeHCL reports whether the first line that is neither blank nor a
// comment opens a resource block.
func looksLikeHCL(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxStdinManifest)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "//") {
			continue
		}
		return strings.HasPrefix(line, "resource ") || strings.HasPrefix(line, "resource\t")
	}
	return false
}
