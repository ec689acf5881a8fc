package server

import (
	"crypto/tls"
	"crypto/x509"
)

// ServerTLS returns the API's server TLS config: TLS 1.3, this replica's
// certificate, and client certificates verified against the CA when given
// (the routing table refuses requests without one, except POST /v1/join).
func ServerTLS(cert tls.Certificate, ca *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    ca,
	}
}

// ClientTLS returns a client TLS config presenting cert and trusting only ca.
func ClientTLS(cert tls.Certificate, ca *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		RootCAs:      ca,
	}
}
