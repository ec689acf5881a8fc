package raftnode

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/store"
)

func TestSnapshotLineBounds(t *testing.T) {
	tests := []struct {
		name string
		read func(string) error
		max  int
	}{
		{"header", func(s string) error {
			_, err := readHeaderLine(bufio.NewReader(strings.NewReader(s)))
			return err
		}, MaxSnapshotHeader},
		{"object line", func(s string) error {
			_, err := io.Copy(io.Discard, &lineLimit{r: strings.NewReader(s), max: MaxSnapshotLine})
			return err
		}, MaxSnapshotLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A line of max bytes, its newline included, passes.
			at := strings.Repeat("a", tt.max-1) + "\n" + "b"
			if err := tt.read(at); err != nil {
				t.Fatalf("line of %d bytes: %v", tt.max, err)
			}
			over := strings.Repeat("a", tt.max) + "\n"
			if err := tt.read(over); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("line of %d bytes: err %v, want store.ErrInvalid", tt.max+1, err)
			}
		})
	}
}

func TestLineLimitCountsAcrossReads(t *testing.T) {
	// Lines of max bytes, newline included, pass however they are split.
	line := strings.Repeat("x", 9) + "\n"
	r := &lineLimit{r: io.MultiReader(strings.NewReader(line[:4]), strings.NewReader(line[4:]+line)), max: 10}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, []byte(line+line)) {
		t.Fatalf("got %q, %v", got, err)
	}
	r = &lineLimit{r: io.MultiReader(strings.NewReader("xxxxxx"), strings.NewReader("xxxxx")), max: 10}
	if _, err := io.ReadAll(r); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("11 bytes across two reads: err %v, want store.ErrInvalid", err)
	}
}
