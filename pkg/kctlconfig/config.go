package kctlconfig

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
)

// APIVersion and Kind are stamped on every config file kctl writes.
const (
	APIVersion = "kcore.dev/v1"
	Kind       = "Config"
)

// Sentinel errors, for errors.Is.
var (
	// ErrNoCurrentContext is returned by Current when no context is selected.
	ErrNoCurrentContext = errors.New("no current context: run kctl controller init or kctl config use-context")
	// ErrContextNotFound is returned when a named context does not exist.
	ErrContextNotFound = errors.New("context not found")
)

// Config is the whole kctl config file.
type Config struct {
	// APIVersion is kcore.dev/v1.
	APIVersion string `yaml:"apiVersion"`
	// Kind is Config.
	Kind string `yaml:"kind"`
	// CurrentContext names the context kctl uses when --context is not given.
	CurrentContext string `yaml:"current-context"`
	// Contexts are the known installations and identities, in file order.
	Contexts []Context `yaml:"contexts"`
}

// Context is one kcore installation reached as one identity.
type Context struct {
	// Name identifies the context, e.g. lab or lab-viewer.
	Name string `yaml:"name"`
	// Controllers are the controller URLs, e.g. https://10.0.0.1:7443.
	Controllers []string `yaml:"controllers"`
	// CertificateAuthorityData is the controller CA certificate, base64 PEM.
	CertificateAuthorityData string `yaml:"certificate-authority-data"`
	// ClientCertificateData is the client certificate, base64 PEM.
	ClientCertificateData string `yaml:"client-certificate-data"`
	// ClientKeyData is the client private key, base64 PEM.
	ClientKeyData string `yaml:"client-key-data"`
	// Role is the certificate's role (cluster-admin, operator, viewer), for display.
	Role string `yaml:"role,omitempty"`
	// User is the certificate's common name, for display.
	User string `yaml:"user,omitempty"`
}

// New returns an empty config with its header set.
func New() *Config {
	return &Config{APIVersion: APIVersion, Kind: Kind}
}

// Context returns the context called name.
func (c *Config) Context(name string) (*Context, error) {
	for i := range c.Contexts {
		if c.Contexts[i].Name == name {
			return &c.Contexts[i], nil
		}
	}
	return nil, fmt.Errorf("find context %q: %w", name, ErrContextNotFound)
}

// Has reports whether a context called name exists.
func (c *Config) Has(name string) bool {
	_, err := c.Context(name)
	return err == nil
}

// Current returns the current context.
func (c *Config) Current() (*Context, error) {
	if c.CurrentContext == "" {
		return nil, ErrNoCurrentContext
	}
	ctx, err := c.Context(c.CurrentContext)
	if err != nil {
		return nil, fmt.Errorf("current context %q is not in the config: %w", c.CurrentContext, ErrContextNotFound)
	}
	return ctx, nil
}

// Use makes the context called name current.
func (c *Config) Use(name string) error {
	if !c.Has(name) {
		return fmt.Errorf("use context %q: %w", name, ErrContextNotFound)
	}
	c.CurrentContext = name
	return nil
}

// Set adds ctx, replacing a context of the same name in place.
func (c *Config) Set(ctx Context) {
	for i := range c.Contexts {
		if c.Contexts[i].Name == ctx.Name {
			c.Contexts[i] = ctx
			return
		}
	}
	c.Contexts = append(c.Contexts, ctx)
}

// Remove deletes the context called name; the current context is cleared
// when it was that one.
func (c *Config) Remove(name string) error {
	i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == name })
	if i < 0 {
		return fmt.Errorf("remove context %q: %w", name, ErrContextNotFound)
	}
	c.Contexts = slices.Delete(c.Contexts, i, i+1)
	if c.CurrentContext == name {
		c.CurrentContext = ""
	}
	return nil
}

// Credentials are a context's decoded PEM blocks.
type Credentials struct {
	CA   []byte
	Cert []byte
	Key  []byte
}

// Credentials decodes the context's base64 CA, certificate and key.
func (x *Context) Credentials() (Credentials, error) {
	var out Credentials
	for _, f := range []struct {
		name string
		in   string
		out  *[]byte
	}{
		{"certificate-authority-data", x.CertificateAuthorityData, &out.CA},
		{"client-certificate-data", x.ClientCertificateData, &out.Cert},
		{"client-key-data", x.ClientKeyData, &out.Key},
	} {
		if f.in == "" {
			return Credentials{}, fmt.Errorf("context %q: %s is empty", x.Name, f.name)
		}
		b, err := base64.StdEncoding.DecodeString(f.in)
		if err != nil {
			return Credentials{}, fmt.Errorf("context %q: decode %s: %w", x.Name, f.name, err)
		}
		*f.out = b
	}
	return out, nil
}

// SetCredentials stores PEM blocks base64-encoded in the context.
func (x *Context) SetCredentials(c Credentials) {
	enc := base64.StdEncoding.EncodeToString
	x.CertificateAuthorityData = enc(c.CA)
	x.ClientCertificateData = enc(c.Cert)
	x.ClientKeyData = enc(c.Key)
}
