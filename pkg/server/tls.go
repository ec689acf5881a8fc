package server

import (
	"crypto/tls"
	"crypto/x509"
)

// baseServerTLS is the API's server TLS config without the revocation
// check (see Server.ServerTLS).
func baseServerTLS(cert tls.Certificate, ca *x509.CertPool) *tls.Config {
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
