package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/schema"
)

func TestSchemasCmdWritesEveryKind(t *testing.T) {
	out := filepath.Join(t.TempDir(), "schemas")
	var stdout, stderr bytes.Buffer
	root := NewKctl(Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	root.SetArgs([]string{"schemas", "--out", out, "--api-dir", filepath.Join("..", "api")})
	if err := root.Execute(); err != nil {
		t.Fatalf("kctl schemas: %v\n%s", err, stderr.String())
	}
	want, err := schema.Generate(filepath.Join("..", "api"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range want {
		got, err := os.ReadFile(filepath.Join(out, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s differs from schema.Generate", f.Name)
		}
		if !strings.Contains(stdout.String(), f.Name) {
			t.Errorf("output does not mention %s:\n%s", f.Name, stdout.String())
		}
	}
}

func TestSchemasCmdIsHidden(t *testing.T) {
	var stdout bytes.Buffer
	root := NewKctl(Streams{In: strings.NewReader(""), Out: &stdout, Err: &stdout})
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout.String(), "schemas") {
		t.Errorf("kctl --help lists the hidden schemas command:\n%s", stdout.String())
	}
}

func TestSchemasCmdBadAPIDir(t *testing.T) {
	var stdout bytes.Buffer
	root := NewKctl(Streams{In: strings.NewReader(""), Out: &stdout, Err: &stdout})
	root.SetArgs([]string{"schemas", "--out", t.TempDir(), "--api-dir", filepath.Join(t.TempDir(), "missing")})
	if err := root.Execute(); err == nil {
		t.Error("want an error for a missing api source directory")
	}
}
