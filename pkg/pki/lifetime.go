package pki

import (
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// Renewal happens at RenewNum/RenewDen of a certificate's lifetime (two
// thirds): a one-year leaf is reissued four months before it expires, a
// three-minute one a minute before, which leaves a third of the lifetime
// to ride out an outage of whoever renews it.
const (
	RenewNum = 2
	RenewDen = 3
)

// Leaf lifetimes. DefaultLeafValidity is what every leaf kcore issues is
// valid for unless Lifetime.Leaf says otherwise; MinLeafValidity is the
// shortest a leaf may be made (tests and the lab use it to see rotations
// within minutes), MaxLeafValidity the longest.
const (
	DefaultLeafValidity = 365 * 24 * time.Hour
	MinLeafValidity     = 3 * time.Minute
	MaxLeafValidity     = 5 * 365 * 24 * time.Hour
)

// ErrBadLifetime is returned for a leaf lifetime outside
// [MinLeafValidity, MaxLeafValidity].
var ErrBadLifetime = errors.New("leaf lifetime out of bounds")

// Lifetime is the one lifetime policy of the certificates kcore issues:
// how long a leaf is valid. Renewal is always at two thirds of it.
type Lifetime struct {
	// Leaf is how long a leaf certificate is valid; 0 means
	// DefaultLeafValidity.
	Leaf time.Duration
}

// LeafValidity is the validity a new leaf gets.
func (l Lifetime) LeafValidity() time.Duration {
	if l.Leaf == 0 {
		return DefaultLeafValidity
	}
	return l.Leaf
}

// Validate refuses a leaf lifetime outside the bounds (0 is the default).
func (l Lifetime) Validate() error {
	if l.Leaf == 0 || (l.Leaf >= MinLeafValidity && l.Leaf <= MaxLeafValidity) {
		return nil
	}
	return fmt.Errorf("check leaf validity %s: want %s to %s: %w", l.Leaf, MinLeafValidity, MaxLeafValidity, ErrBadLifetime)
}

// RenewAt is when a certificate is due for renewal: RenewNum/RenewDen of
// the way from NotBefore to NotAfter.
func RenewAt(c *x509.Certificate) time.Time {
	life := c.NotAfter.Sub(c.NotBefore)
	return c.NotBefore.Add(life / RenewDen * RenewNum)
}

// Due reports whether c should be reissued at now under l: past two thirds
// of its life, or valid for longer than l gives a new leaf (the policy was
// shortened), so a changed policy takes effect without waiting out the old
// lifetime.
func (l Lifetime) Due(c *x509.Certificate, now time.Time) bool {
	if !now.Before(RenewAt(c)) {
		return true
	}
	return c.NotAfter.Sub(now) > l.LeafValidity()+time.Minute
}

// RenewalRequest is the request that reissues c for validity: the same
// subject, SANs and usages.
func RenewalRequest(c *x509.Certificate, validity time.Duration) CertRequest {
	req := CertRequest{
		CommonName:         c.Subject.CommonName,
		Organization:       c.Subject.Organization,
		OrganizationalUnit: c.Subject.OrganizationalUnit,
		DNSNames:           c.DNSNames,
		IPs:                c.IPAddresses,
		Validity:           validity,
	}
	for _, u := range c.ExtKeyUsage {
		switch u {
		case x509.ExtKeyUsageServerAuth:
			req.Usage |= UsageServer
		case x509.ExtKeyUsageClientAuth:
			req.Usage |= UsageClient
		}
	}
	return req
}
