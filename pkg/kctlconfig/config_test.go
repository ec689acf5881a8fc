package kctlconfig

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sample() *Config {
	c := New()
	a := Context{Name: "lab", Controllers: []string{"https://10.0.0.1:7443", "https://10.0.0.2:7443"}, Role: "cluster-admin", User: "admin"}
	a.SetCredentials(Credentials{CA: []byte("ca-pem"), Cert: []byte("cert-pem"), Key: []byte("key-pem")})
	c.Set(a)
	b := Context{Name: "lab-viewer", Controllers: []string{"https://10.0.0.1:7443"}, Role: "viewer", User: "alice"}
	b.SetCredentials(Credentials{CA: []byte("ca"), Cert: []byte("c"), Key: []byte("k")})
	c.Set(b)
	c.CurrentContext = "lab"
	return c
}

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config")
	want := sample()
	if err := want.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
	cur, err := got.Current()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cur.Credentials()
	if err != nil {
		t.Fatal(err)
	}
	if string(creds.CA) != "ca-pem" || string(creds.Cert) != "cert-pem" || string(creds.Key) != "key-pem" {
		t.Fatalf("credentials = %q", creds)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiVersion: kcore.dev/v1", "kind: Config", "current-context: lab", "certificate-authority-data: Y2EtcGVt"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("file lacks %q:\n%s", want, data)
		}
	}
}

func TestSavePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kcore")
	path := filepath.Join(dir, "config")
	if err := sample().Save(path); err != nil {
		t.Fatal(err)
	}
	// A file loosened by hand is tightened again on the next save.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sample().Save(path); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		mode os.FileMode
	}{{path, 0o600}, {dir, 0o700}} {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != tc.mode {
			t.Errorf("%s mode = %v, want %v", tc.path, fi.Mode().Perm(), tc.mode)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries (temp file left behind?)", len(entries))
	}
}

func TestLoadMissingIsEmpty(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "none"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Current(); !errors.Is(err, ErrNoCurrentContext) {
		t.Fatalf("Current() = %v, want ErrNoCurrentContext", err)
	}
	if !strings.Contains(ErrNoCurrentContext.Error(), "kctl controller init") {
		t.Fatalf("error does not say what to do: %v", ErrNoCurrentContext)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown field", "apiVersion: kcore.dev/v1\nkind: Config\ncontexts:\n- name: a\n  server: x\n", "field server not found"},
		{"wrong kind", "apiVersion: v1\nkind: Config\n", "want apiVersion"},
		{"duplicate", "apiVersion: kcore.dev/v1\nkind: Config\ncontexts:\n- name: a\n- name: a\n", "appears twice"},
		{"nameless", "apiVersion: kcore.dev/v1\nkind: Config\ncontexts:\n- controllers: []\n", "has no name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("cfg", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestUseAndCurrent(t *testing.T) {
	c := sample()
	if err := c.Use("nope"); !errors.Is(err, ErrContextNotFound) {
		t.Fatalf("Use(nope) = %v", err)
	}
	if err := c.Use("lab-viewer"); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Current()
	if err != nil || cur.Name != "lab-viewer" {
		t.Fatalf("Current = %v, %v", cur, err)
	}
	c.CurrentContext = "gone"
	if _, err := c.Current(); !errors.Is(err, ErrContextNotFound) {
		t.Fatalf("Current(gone) = %v", err)
	}
	if err := c.Remove("lab-viewer"); err != nil {
		t.Fatal(err)
	}
	if c.Has("lab-viewer") || len(c.Contexts) != 1 {
		t.Fatalf("Remove left %v", c.Contexts)
	}
}

func TestResolvePath(t *testing.T) {
	def, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, env, want string }{
		{"/f", "/e", "/f"},
		{"", "/e", "/e"},
		{"", "", def},
	} {
		got, err := ResolvePath(tc.flag, tc.env)
		if err != nil || got != tc.want {
			t.Errorf("ResolvePath(%q, %q) = %q, %v; want %q", tc.flag, tc.env, got, err, tc.want)
		}
	}
}
