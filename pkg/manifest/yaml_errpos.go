package manifest

import (
	"bytes"
	"errors"
	"io"
	"sort"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// locateYAMLError finds the character a yaml.v3 syntax error is about.
//
// yaml.v3 does not report where it found the problem but where the
// construct it was reading began: the line of the enclosing mapping, list or
// quoted string, and for parser errors ("did not find expected key",
// "did not find expected '-' indicator", "did not find expected ',' or ']'")
// that line counted from 0, so one line above it. The parser reads its input
// once, front to back, so the error appears as soon as the offending
// character is part of the input: the shortest prefix of data that fails with
// exactly the same error (message and reported line) ends with it. That
// prefix is found by bisection, at most log2(len(data))+1 parses. It returns
// at when no prefix fails the same way.
func locateYAMLError(filename string, data []byte, err error, at Pos) Pos {
	want := err.Error()
	same := func(n int) bool {
		e := firstYAMLError(data[:n])
		return e != nil && e.Error() == want
	}
	n := sort.Search(len(data)+1, same)
	if n == 0 || n > len(data) || !same(n) {
		return at
	}
	off := n - 1
	for off > 0 && !utf8.RuneStart(data[off]) {
		off--
	}
	lineStart := bytes.LastIndexByte(data[:off], '\n') + 1
	return Pos{
		File:   filename,
		Line:   bytes.Count(data[:off], []byte{'\n'}) + 1,
		Column: utf8.RuneCount(data[lineStart:off]) + 1,
	}
}

// firstYAMLError parses every document of data and returns the first error.
func firstYAMLError(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
