package api

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Bounds of spec.registryMirrors.
const (
	// MaxRegistryMirrors is the most upstream registries one cluster mirrors.
	MaxRegistryMirrors = 16
	// MaxMirrorEndpoints is the most mirror URLs of one registry.
	MaxMirrorEndpoints = 8
	// MaxMirrorEndpointLen is the longest mirror URL, in bytes.
	MaxMirrorEndpointLen = 256
	// MaxMirrorCAPEMBytes is the largest caPem bundle, in bytes.
	MaxMirrorCAPEMBytes = 64 << 10
)

// registryHost is a registry host as image references spell it: a lowercase
// DNS name or IPv4 address, then an optional :port.
func registryHost() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$`)
}

// IsRegistryHost reports whether s is an upstream registry host[:port] such
// as registry.k8s.io, docker.io or 10.77.0.1:5000: it names a directory
// under /etc/containerd/certs.d, so it can hold no '/' and no "..".
func IsRegistryHost(s string) bool {
	if len(s) > 253 || !registryHost().MatchString(s) {
		return false
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		p, err := strconv.Atoi(s[i+1:])
		return err == nil && p >= 1 && p <= 65535
	}
	return true
}

// validateRegistryMirrors checks spec.registryMirrors: bounded, one entry
// per registry, endpoints that are bare http(s) URLs of a host (plain http
// is a warning: pulls are then neither private nor authenticated), and a
// caPem that holds only parseable certificates.
func validateRegistryMirrors(v *collector, mirrors []RegistryMirror) {
	const base = "spec.registryMirrors"
	if len(mirrors) > MaxRegistryMirrors {
		v.errorf(base, "%d registries; at most %d", len(mirrors), MaxRegistryMirrors)
		return
	}
	seen := map[string]string{}
	for i, m := range mirrors {
		p := index(base, i)
		switch {
		case m.Registry == "":
			v.errorf(p+".registry", "required: the upstream registry host, e.g. registry.k8s.io or docker.io")
		case !IsRegistryHost(m.Registry):
			v.errorf(p+".registry", "%q is not a registry host[:port] such as registry.k8s.io, docker.io or 10.77.0.1:5000 (lowercase, no scheme, no path)", m.Registry)
		default:
			if prev, ok := seen[m.Registry]; ok {
				v.errorf(p+".registry", "duplicate registry %q (also %s); list all its endpoints in one entry", m.Registry, prev)
			}
			seen[m.Registry] = p
		}
		validateMirrorEndpoints(v, p+".endpoints", m.Endpoints)
		if m.CAPEM != "" {
			validateMirrorCA(v, p+".caPem", m.CAPEM)
		}
	}
}

func validateMirrorEndpoints(v *collector, p string, endpoints []string) {
	switch {
	case len(endpoints) == 0:
		v.errorf(p, "at least one mirror URL is required, e.g. https://10.77.0.1:5000")
		return
	case len(endpoints) > MaxMirrorEndpoints:
		v.errorf(p, "%d endpoints; at most %d", len(endpoints), MaxMirrorEndpoints)
		return
	}
	seen := map[string]bool{}
	for j, e := range endpoints {
		ep := index(p, j)
		if len(e) > MaxMirrorEndpointLen {
			v.errorf(ep, "%d bytes; at most %d", len(e), MaxMirrorEndpointLen)
			continue
		}
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || !IsRegistryHost(u.Host) ||
			u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			v.errorf(ep, "%q is not a mirror URL: https:// or http://, a lowercase host[:port], no user, path or query (e.g. https://10.77.0.1:5000)", e)
			continue
		}
		norm := u.Scheme + "://" + u.Host
		if seen[norm] {
			v.errorf(ep, "duplicate endpoint %q", e)
		}
		seen[norm] = true
		if u.Scheme == "http" {
			v.warnf(ep, "%q is plain http: image pulls from it are neither encrypted nor authenticated; prefer https with caPem", e)
		}
	}
}

// validateMirrorCA checks that pem holds one or more CERTIFICATE blocks, each
// a parseable X.509 certificate, and nothing else.
func validateMirrorCA(v *collector, p, caPEM string) {
	if len(caPEM) > MaxMirrorCAPEMBytes {
		v.errorf(p, "%d bytes; at most %d", len(caPEM), MaxMirrorCAPEMBytes)
		return
	}
	rest := []byte(caPEM)
	n := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			v.errorf(p, "holds a %q PEM block; only CERTIFICATE blocks (CA certificates, never keys) belong here", block.Type)
			return
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			v.errorf(p, "certificate %d does not parse: %v", n+1, err)
			return
		}
		n++
	}
	if n == 0 {
		v.errorf(p, "holds no PEM CERTIFICATE block")
		return
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		v.errorf(p, "has text after its last certificate that is not PEM")
	}
}
