package store

import "encoding/json"

// Sealed is the envelope in which secret material is stored: the API layer
// encrypts (e.g. AES-GCM under the controller's key file) before it builds a
// Put, and decrypts after a Get, so the log, the FSM and snapshots only ever
// hold ciphertext.
type Sealed struct {
	// Alg names the cipher, e.g. "AES-256-GCM".
	Alg string `json:"alg"`
	// KeyID names the key that sealed the data, so keys can be rotated.
	KeyID string `json:"keyId,omitempty"`
	// Nonce is the cipher's nonce.
	Nonce []byte `json:"nonce,omitempty"`
	// Ciphertext is the sealed data, including any authentication tag.
	Ciphertext []byte `json:"ciphertext"`
}

// Sealer seals and opens secret material. The store does not implement it;
// the API layer does, and binds kind and name as associated data so a sealed
// value cannot be moved to another object.
type Sealer interface {
	// Seal encrypts plaintext for the object (kind, name).
	Seal(kind, name string, plaintext []byte) (Sealed, error)
	// Open decrypts a Sealed value of the object (kind, name).
	Open(kind, name string, s Sealed) ([]byte, error)
}

// checkSealed reports whether data is a Sealed envelope with an algorithm and
// ciphertext. It is a shape check only: the store cannot tell ciphertext from
// plaintext, it refuses data that was not even wrapped.
func checkSealed(data json.RawMessage) bool {
	var s Sealed
	if err := json.Unmarshal(data, &s); err != nil {
		return false
	}
	return s.Alg != "" && len(s.Ciphertext) > 0
}
