package manifest

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// MaxDepth bounds how deeply a manifest may nest. Both readers measure it
// with a linear pre-scan before the input reaches the YAML or HCL parser,
// whose recursion (and, for HCL, evaluation) would otherwise grow with the
// input until the stack overflows: `[[[[…` a million deep kills the process.
// Real manifests stay below 10.
//
// YAML counts indentation levels, sequence and mapping-key indicators on
// one line (`- - -`, `? ? ?`) and open flow collections (`[`, `{`). HCL
// counts open blocks, braces, brackets, parentheses, strings, heredocs and
// template sequences, plus the terms of the expression being written at
// each of them (`!!!!x`, `1+1+1…`, `a ? b : c ? …`, `x[y][z]…` nest as
// deeply as they are long). Text in strings and comments is not counted;
// the HCL scan follows the hclsyntax lexer's rules for them, and refuses
// non-ASCII bytes outside them rather than guess how the lexer's Unicode
// identifier tables join them to the code around.
const MaxDepth = 64

// depthMessage is the diagnostic for input nested deeper than MaxDepth.
func depthMessage() string {
	return fmt.Sprintf("nested deeper than the limit of %d levels (manifest.MaxDepth): a manifest nests a few levels, this input is malformed", MaxDepth)
}

// posAt is the 1-based line and column (in characters) of byte offset off.
func posAt(file string, data []byte, off int, withColumn bool) Pos {
	off = min(off, len(data))
	head := data[:off]
	line := 1 + bytes.Count(head, []byte("\n"))
	p := Pos{File: file, Line: line}
	if withColumn {
		p.Column = 1 + utf8.RuneCount(head[bytes.LastIndexByte(head, '\n')+1:])
	}
	return p
}
