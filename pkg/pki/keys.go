package pki

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
)

// NewServiceAccountKey returns an RSA 2048 key pair for signing service-account
// tokens: CertPEM holds the PEM public key (PUBLIC KEY), KeyPEM the private key.
func NewServiceAccountKey() (KeyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generate service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return KeyPair{}, fmt.Errorf("encode service-account public key: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: pemBlock("PUBLIC KEY", pub), KeyPEM: keyPEM}, nil
}
