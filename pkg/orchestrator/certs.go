package orchestrator

import (
	"fmt"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// CondCertificates is False while a stored certificate of the cluster is
// close to expiry (see CertWarnWithin); it does not change the phase.
const CondCertificates = "Certificates"

// CertWarnWithin is how long before expiry a certificate turns
// CondCertificates False. A leaf whose lifetime is short enough that a
// quarter of it is less (test and lab lifetimes) warns within that quarter
// instead: renewal is at two thirds, so a warning means it did not happen.
const CertWarnWithin = 30 * 24 * time.Hour

// maxExpiringNamed bounds the certificates the condition's message names.
const maxExpiringNamed = 5

// certificates lists the stored certificates of c for its status and the
// condition saying whether any is close to expiry at now.
func certificates(c *api.KubernetesCluster, s *pki.ClusterSecrets, now time.Time) ([]api.CertificateStatus, api.Condition, error) {
	inv, err := s.Inventory(c)
	if err != nil {
		return nil, api.Condition{}, fmt.Errorf("list certificates of %s: %w", c.Metadata.Name, err)
	}
	out := make([]api.CertificateStatus, 0, len(inv))
	var expiring []string
	for _, ci := range inv {
		out = append(out, api.CertificateStatus{Name: ci.Name, Subject: ci.Subject, Issuer: ci.Issuer, NotAfter: ci.NotAfter.Format(time.RFC3339)})
		if expiresSoon(ci, now) {
			expiring = append(expiring, ci.Name+" ("+ci.NotAfter.Format(time.RFC3339)+")")
		}
	}
	cond := api.Condition{Type: CondCertificates, Status: StatusTrue, Reason: "Valid", Message: "no certificate expires within the warning window"}
	if len(expiring) > 0 {
		named := expiring
		if len(named) > maxExpiringNamed {
			named = append(named[:maxExpiringNamed:maxExpiringNamed], fmt.Sprintf("and %d more", len(expiring)-maxExpiringNamed))
		}
		cond = api.Condition{Type: CondCertificates, Status: StatusFalse, Reason: "ExpiringSoon",
			Message: fmt.Sprintf("%d certificates expire soon or have expired: %s", len(expiring), strings.Join(named, ", "))}
	}
	return out, cond, nil
}

// expiresSoon reports whether ci is within its warning window at now.
func expiresSoon(ci pki.CertInfo, now time.Time) bool {
	window := CertWarnWithin
	if life := ci.NotAfter.Sub(ci.NotBefore); life/4 < window {
		window = life / 4
	}
	return !now.Add(window).Before(ci.NotAfter)
}
