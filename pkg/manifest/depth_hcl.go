package manifest

import (
	"bytes"
)

// hclLevel is one open nesting level of the HCL pre-scan.
type hclLevel struct {
	// kind is '{' (a block body or object), '[', '(', '$' (a template
	// sequence, ${ or %{), '"' (a quoted string) or '<' (a heredoc); the
	// file's top level is '{' too.
	kind byte
	// terms counts the tokens of the expression being written at this
	// level; a comma, or a newline after a complete value in a body or
	// object, starts the next one.
	terms int
	// marker closes a heredoc; lineStart is set at the start of its lines.
	marker    []byte
	lineStart bool
}

// hclDepth scans HCL source the way the hclsyntax lexer splits it — code,
// quoted strings, heredocs, template sequences and comments — and returns
// the byte offset at which it nests deeper than MaxDepth (open levels plus
// the terms of the expression at each), or -1. The message is set when it
// stopped for another reason. It reads the input once and keeps at most
// MaxDepth levels.
func hclDepth(data []byte) (int, string) {
	s := hclScan{data: data, stack: []hclLevel{{kind: '{'}}}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	s.i = len(s.data) - len(data)
	for s.i < len(s.data) {
		start := s.i
		var ok bool
		switch s.top().kind {
		case '"':
			ok = s.stringStep()
		case '<':
			ok = s.heredocStep()
		default:
			ok = s.codeStep()
		}
		if !ok {
			if s.msg != "" {
				return start, s.msg
			}
			return start, depthMessage()
		}
	}
	return -1, ""
}

type hclScan struct {
	data  []byte
	i     int
	stack []hclLevel
	// cost is the open levels (the top level aside) plus all their terms.
	cost int
	// msg says why the scan stopped, when not for depth.
	msg string
	// afterValue is set when the last code token ended a value (a name, a
	// number, a closing bracket or quote), so that a newline ends the
	// expression; after an operator the expression goes on.
	afterValue bool
}

func (s *hclScan) top() *hclLevel { return &s.stack[len(s.stack)-1] }

// term counts one token at the current level.
func (s *hclScan) term() bool {
	s.top().terms++
	s.cost++
	return s.cost <= MaxDepth
}

// reset starts the next expression at the current level.
func (s *hclScan) reset() {
	s.cost -= s.top().terms
	s.top().terms = 0
}

// push opens a level; the token that opens it is a term of the outer one.
func (s *hclScan) push(l hclLevel) bool {
	ok := s.term()
	s.stack = append(s.stack, l)
	s.cost++
	return ok && s.cost <= MaxDepth
}

// pop closes the innermost level.
func (s *hclScan) pop() {
	s.cost -= 1 + s.top().terms
	s.stack = s.stack[:len(s.stack)-1]
}

// closeBrace handles } and ~} in code: like the lexer, it ends the
// innermost template sequence or brace, whichever is nearer, closing any
// bracket left open inside it; a stray one is a plain token.
func (s *hclScan) closeBrace() {
	for j := len(s.stack) - 1; j > 0; j-- {
		if k := s.stack[j].kind; k == '{' || k == '$' {
			for len(s.stack) > j {
				s.pop()
			}
			return
		}
	}
}

func (s *hclScan) at(off int) byte {
	if s.i+off < len(s.data) {
		return s.data[s.i+off]
	}
	return 0
}

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isIdentByte(c byte) bool { return isIdentStart(c) || c == '-' || (c >= '0' && c <= '9') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// codeStep reads one token of code.
func (s *hclScan) codeStep() bool {
	c := s.data[s.i]
	switch {
	case c == ' ' || c == '\t' || c == '\r':
		s.i++
		return true
	case c == '\n':
		s.newline()
		s.i++
		return true
	case c == '#' || (c == '/' && s.at(1) == '/'):
		end := bytes.IndexByte(s.data[s.i:], '\n')
		if end < 0 {
			s.i = len(s.data)
			return true
		}
		s.i += end
		return true
	case c == '/' && s.at(1) == '*':
		if end := bytes.Index(s.data[s.i+2:], []byte("*/")); end >= 0 {
			s.i += 2 + end + 2
			return true
		}
	case c == '"':
		s.i++
		s.afterValue = false
		return s.push(hclLevel{kind: '"'})
	case c == '<' && s.at(1) == '<':
		if marker, n := heredocIntro(s.data[s.i:]); n > 0 {
			s.i += n
			s.afterValue = false
			return s.push(hclLevel{kind: '<', marker: marker, lineStart: true})
		}
	case c >= 0x80:
		// The lexer's Unicode identifier tables decide how such bytes
		// join the text around them (they can take in a quote); the scan
		// must never guess, and manifests need them only in strings.
		s.msg = "non-ASCII character outside a string, heredoc or comment: names and operators are ASCII"
		return false
	case c == '{' || c == '[' || c == '(':
		s.i++
		s.afterValue = false
		return s.push(hclLevel{kind: c})
	case c == '}' || (c == '~' && s.at(1) == '}'):
		if c == '~' {
			s.i++
		}
		s.i++
		s.closeBrace()
		s.afterValue = true
		return s.term()
	case c == ']' || c == ')':
		s.i++
		if k := s.top().kind; (c == ']' && k == '[') || (c == ')' && k == '(') {
			s.pop()
		}
		s.afterValue = true
		return s.term()
	case c == ',':
		s.i++
		s.reset()
		s.afterValue = false
		return true
	case isDigit(c):
		s.i += numberLen(s.data[s.i:])
		s.afterValue = true
		return s.term()
	case isIdentStart(c):
		for s.i < len(s.data) && isIdentByte(s.data[s.i]) {
			s.i++
		}
		s.afterValue = true
		return s.term()
	}
	s.i++
	s.afterValue = false
	return s.term()
}

// newline ends the expression at a body or object level after a complete
// value; inside brackets and parentheses newlines do not end anything.
func (s *hclScan) newline() {
	if s.top().kind == '{' && s.afterValue {
		s.reset()
	}
	s.afterValue = false
}

// numberLen is the length of the number literal at the start of b, as the
// lexer reads it: digits, dots and exponents.
func numberLen(b []byte) int {
	i := 1
	for i < len(b) {
		switch c := b[i]; {
		case isDigit(c):
			i++
		case c == '.' && i+1 < len(b) && isDigit(b[i+1]):
			i++
		case c == 'e' || c == 'E':
			j := i + 1
			if j < len(b) && (b[j] == '+' || b[j] == '-') {
				j++
			}
			if j >= len(b) || !isDigit(b[j]) {
				return i
			}
			i = j
		default:
			return i
		}
	}
	return i
}

// heredocIntro reads <<EOT or <<-EOT and its newline at the start of b,
// returning the marker and the length read, or 0 when b does not start a
// heredoc. Markers are ASCII: a non-ASCII byte in one ends the run here,
// and the code scan refuses that byte.
func heredocIntro(b []byte) (marker []byte, n int) {
	i := 2
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && isIdentByte(b[i]) {
		i++
	}
	if i == start || !isIdentStart(b[start]) {
		return nil, 0
	}
	marker = b[start:i]
	if i < len(b) && b[i] == '\r' {
		i++
	}
	if i >= len(b) || b[i] != '\n' {
		return nil, 0
	}
	return marker, i + 1
}

// brokenUTF8 reports whether b starts with a byte the lexer reads as
// broken UTF-8: one that starts no sequence of its UTF-8 grammar.
func brokenUTF8(b []byte) bool {
	c := b[0]
	var n int
	switch {
	case c < 0x80:
		return false
	case c >= 0xC0 && c <= 0xDF:
		n = 1
	case c >= 0xE0 && c <= 0xEF:
		n = 2
	case c >= 0xF0 && c <= 0xF7:
		n = 3
	default:
		return true
	}
	if len(b) <= n {
		return true
	}
	for _, cont := range b[1 : n+1] {
		if cont < 0x80 || cont > 0xBF {
			return true
		}
	}
	return false
}

// templateStart reads the $ or % at the start of b: opener is the length of
// a ${ or %{ sequence opener (with its optional ~), else escape is the
// length of text to skip ($${ and %%{ are escapes, a lone $ is text).
func templateStart(b []byte) (opener, escape int) {
	if len(b) < 2 {
		return 0, len(b)
	}
	if b[1] == b[0] && len(b) > 2 && b[2] == '{' {
		return 0, 3
	}
	if b[1] != '{' {
		return 0, 1
	}
	if len(b) > 2 && b[2] == '~' {
		return 3, 0
	}
	return 2, 0
}

// stringStep reads quoted-string text up to its end or a template sequence.
func (s *hclScan) stringStep() bool {
	switch c := s.data[s.i]; c {
	case '\\':
		s.i++
		if s.i < len(s.data) && s.data[s.i] != '\n' && s.data[s.i] != '\r' {
			s.i++
		}
	case '"':
		s.i++
		s.pop()
		s.afterValue = true
	case '$', '%':
		return s.template()
	default:
		s.i++
	}
	return true
}

// heredocStep reads heredoc text: a line that is the marker ends it,
// template sequences nest code in it.
func (s *hclScan) heredocStep() bool {
	l := s.top()
	if l.lineStart {
		// Like the lexer, a line is the marker when its text, after any
		// broken UTF-8 bytes that start it, trims to the marker.
		j := s.i
		for j < len(s.data) && brokenUTF8(s.data[j:]) {
			j++
		}
		l.lineStart = false
		if end := bytes.IndexByte(s.data[j:], '\n'); end >= 0 && bytes.Equal(bytes.TrimSpace(s.data[j:j+end]), l.marker) {
			s.i = j + end
			s.pop()
			s.afterValue = true
			return true
		}
	}
	switch c := s.data[s.i]; c {
	case '\n':
		s.i++
		l.lineStart = true
	case '$', '%':
		return s.template()
	default:
		s.i++
	}
	return true
}

// template steps over a '$' or '%' in quoted or heredoc text: an escaped
// one is text, an opening "${" or "%{" nests code in it.
func (s *hclScan) template() bool {
	open, esc := templateStart(s.data[s.i:])
	if open == 0 {
		s.i += esc
		return true
	}
	s.i += open
	return s.push(hclLevel{kind: '$'})
}
