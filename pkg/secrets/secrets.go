package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"kcore.dev/kcore/pkg/store"
)

// KeySize is the length of an encryption key file in bytes.
const KeySize = 32

// Alg is the algorithm name written into every Sealed envelope.
const Alg = "AES-256-GCM"

// Errors of this package; test with errors.Is.
var (
	// ErrKeySize means a key file does not hold exactly KeySize bytes.
	ErrKeySize = errors.New("encryption key must be 32 bytes")
	// ErrOpen means a sealed value could not be decrypted: wrong key, wrong
	// object, or tampered ciphertext.
	ErrOpen = errors.New("open sealed value")
)

// Keyring seals and opens values under one AES-256-GCM key.
type Keyring struct {
	aead  cipher.AEAD
	keyID string
}

// New returns a Keyring for a 32-byte key.
func New(key []byte) (*Keyring, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("load encryption key: got %d bytes: %w", len(key), ErrKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("load encryption key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("load encryption key: %w", err)
	}
	sum := sha256.Sum256(key)
	return &Keyring{aead: aead, keyID: hex.EncodeToString(sum[:4])}, nil
}

// LoadFile reads a key file: 32 raw bytes.
func LoadFile(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read encryption key: %w", err)
	}
	return New(b)
}

// NewKey returns 32 random bytes for a new key file.
func NewKey() ([]byte, error) {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("generate encryption key: %w", err)
	}
	return k, nil
}

// KeyID names the key: the first 4 bytes of its SHA-256, in hex.
func (k *Keyring) KeyID() string { return k.keyID }

func aad(kind, name string) []byte {
	return []byte(kind + "\x00" + name)
}

// Seal encrypts plaintext for the object (kind, name).
func (k *Keyring) Seal(kind, name string, plaintext []byte) (store.Sealed, error) {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return store.Sealed{}, fmt.Errorf("seal %s/%s: %w", kind, name, err)
	}
	return store.Sealed{
		Alg:        Alg,
		KeyID:      k.keyID,
		Nonce:      nonce,
		Ciphertext: k.aead.Seal(nil, nonce, plaintext, aad(kind, name)),
	}, nil
}

// Open decrypts a Sealed value of the object (kind, name).
func (k *Keyring) Open(kind, name string, s store.Sealed) ([]byte, error) {
	if s.Alg != Alg || len(s.Nonce) != k.aead.NonceSize() {
		return nil, fmt.Errorf("open %s/%s: algorithm %q: %w", kind, name, s.Alg, ErrOpen)
	}
	pt, err := k.aead.Open(nil, s.Nonce, s.Ciphertext, aad(kind, name))
	if err != nil {
		return nil, fmt.Errorf("open %s/%s: %w: %w", kind, name, ErrOpen, err)
	}
	return pt, nil
}

// StringPrefix starts a sealed string (see SealString).
const StringPrefix = "kcore-sealed:v1:"

// SealString seals a string field (e.g. a NodeState file's content) for the
// object (kind, name) and returns it as StringPrefix + base64(JSON Sealed),
// so it can be stored in a plain string field and opened only for the node
// that needs it.
func (k *Keyring) SealString(kind, name, plaintext string) (string, error) {
	s, err := k.Seal(kind, name, []byte(plaintext))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("seal %s/%s: %w", kind, name, err)
	}
	return StringPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// IsSealedString reports whether s was produced by SealString.
func IsSealedString(s string) bool { return strings.HasPrefix(s, StringPrefix) }

// OpenString opens a string produced by SealString for the same object.
func (k *Keyring) OpenString(kind, name, sealed string) (string, error) {
	raw, ok := strings.CutPrefix(sealed, StringPrefix)
	if !ok {
		return "", fmt.Errorf("open %s/%s: not a sealed string: %w", kind, name, ErrOpen)
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return "", fmt.Errorf("open %s/%s: %w: %w", kind, name, ErrOpen, err)
	}
	var s store.Sealed
	if err := json.Unmarshal(b, &s); err != nil {
		return "", fmt.Errorf("open %s/%s: %w: %w", kind, name, ErrOpen, err)
	}
	pt, err := k.Open(kind, name, s)
	if err != nil {
		return "", err
	}
	return string(pt), nil
}
