package secrets

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSealOpen(t *testing.T) {
	key, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewKey()
	k2, _ := New(other)
	plain := []byte("very secret ca key")
	s, err := k.Seal("Secret", "a", plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(s.Ciphertext, plain) {
		t.Fatal("ciphertext holds the plaintext")
	}
	tests := []struct {
		name  string
		ring  *Keyring
		kind  string
		obj   string
		fails bool
	}{
		{"same object", k, "Secret", "a", false},
		{"moved to another object", k, "Secret", "b", true},
		{"other kind", k, "Other", "a", true},
		{"other key", k2, "Secret", "a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ring.Open(tt.kind, tt.obj, s)
			if tt.fails {
				if !errors.Is(err, ErrOpen) {
					t.Fatalf("Open = %q, %v; want ErrOpen", got, err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("Open = %q, %v", got, err)
			}
		})
	}
}

func TestSealString(t *testing.T) {
	key, _ := NewKey()
	k, _ := New(key)
	s, err := k.SealString("NodeState", "c/n1", "-----BEGIN PRIVATE KEY-----")
	if err != nil {
		t.Fatal(err)
	}
	if !IsSealedString(s) {
		t.Fatalf("not a sealed string: %q", s)
	}
	got, err := k.OpenString("NodeState", "c/n1", s)
	if err != nil || got != "-----BEGIN PRIVATE KEY-----" {
		t.Fatalf("OpenString = %q, %v", got, err)
	}
	if _, err := k.OpenString("NodeState", "c/n2", s); !errors.Is(err, ErrOpen) {
		t.Fatalf("OpenString for another node = %v, want ErrOpen", err)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	bad := filepath.Join(dir, "bad")
	key, _ := NewKey()
	if err := os.WriteFile(good, key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, key[:16], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(good); err != nil {
		t.Fatalf("LoadFile(good) = %v", err)
	}
	if _, err := LoadFile(bad); !errors.Is(err, ErrKeySize) {
		t.Fatalf("LoadFile(bad) = %v, want ErrKeySize", err)
	}
}
