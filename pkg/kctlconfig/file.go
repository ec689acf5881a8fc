package kctlconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// EnvConfig is the environment variable that overrides the config file path.
const EnvConfig = "KCTL_CONFIG"

// DefaultPath returns ~/.kcore/config.
func DefaultPath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find config file: %w", err)
	}
	return filepath.Join(home, ".kcore", "config"), nil
}

// ResolvePath picks the config file: flag when set, else env (the value of
// KCTL_CONFIG), else the default path.
func ResolvePath(flag, env string) (string, error) {
	switch {
	case flag != "":
		return flag, nil
	case env != "":
		return env, nil
	}
	return DefaultPath()
}

// Load reads the config at path. A missing file is an empty config, not an
// error, so the first kctl controller init can create it.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read kctl config: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes a config file's bytes; name is used in errors. Unknown fields
// are refused so a typo does not silently drop credentials.
func Parse(name string, data []byte) (*Config, error) {
	c := New()
	if len(bytes.TrimSpace(data)) == 0 {
		return c, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("parse kctl config %s: %w", name, err)
	}
	if c.APIVersion != APIVersion || c.Kind != Kind {
		return nil, fmt.Errorf("parse kctl config %s: want apiVersion %s, kind %s; got %q, %q", name, APIVersion, Kind, c.APIVersion, c.Kind)
	}
	seen := map[string]bool{}
	for _, x := range c.Contexts {
		if x.Name == "" {
			return nil, fmt.Errorf("parse kctl config %s: a context has no name", name)
		}
		if seen[x.Name] {
			return nil, fmt.Errorf("parse kctl config %s: context %q appears twice", name, x.Name)
		}
		seen[x.Name] = true
	}
	return c, nil
}

// Marshal encodes the config as YAML.
func (c *Config) Marshal() ([]byte, error) {
	if c.APIVersion == "" {
		c.APIVersion = APIVersion
	}
	if c.Kind == "" {
		c.Kind = Kind
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encode kctl config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode kctl config: %w", err)
	}
	return buf.Bytes(), nil
}

// Save writes the config to path atomically (a temp file in the same
// directory, fsynced, then renamed) with mode 0600, creating the directory
// with mode 0700 when needed.
func (c *Config) Save(path string) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, data, 0o600)
}

// WriteFileAtomic writes data to path through a temp file and a rename, so a
// reader sees the old or the new content, never a partial file. The parent
// directory is created with mode 0700 when missing.
func WriteFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	return nil
}
