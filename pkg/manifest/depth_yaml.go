package manifest

import (
	"bytes"
)

// yamlScan is the YAML pre-scan's state between lines.
type yamlScan struct {
	// indents are the indentations of the open block nodes.
	indents []int
	// flow counts the open flow collections ([ and {).
	flow int
	// quote is the quote character of a scalar that goes on to the next
	// line, 0 when there is none.
	quote byte
	// block is the indentation of the node that owns a literal or folded
	// block scalar being read, -1 when there is none.
	block int
}

// yamlDepth scans YAML source a line at a time, skipping comments, quoted
// scalars and block scalars, and returns the 1-based line on which it
// nests deeper than MaxDepth — indentation levels, plus the sequence and
// key indicators opening a node on one line, plus open flow collections —
// or 0. It keeps at most MaxDepth indentations.
func yamlDepth(data []byte) int {
	s := yamlScan{block: -1}
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if !s.line(bytes.TrimSuffix(line, []byte("\r"))) {
			return n
		}
	}
	return 0
}

// line scans one line; false when it nests too deeply.
func (s *yamlScan) line(line []byte) bool {
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	rest := line[indent:]
	if s.block >= 0 {
		if len(rest) == 0 || indent > s.block {
			return true
		}
		s.block = -1
	}
	if s.quote != 0 {
		i := quoteEnd(line, 0, s.quote)
		if i < 0 {
			return true
		}
		s.quote = 0
		return s.scan(line, i, indent, 0)
	}
	if indent == 0 && (bytes.HasPrefix(rest, []byte("---")) || bytes.HasPrefix(rest, []byte("..."))) &&
		(len(rest) == 3 || rest[3] == ' ' || rest[3] == '\t') {
		*s = yamlScan{block: -1}
		return s.scan(line, 3, 0, 0)
	}
	if len(rest) == 0 || rest[0] == '#' || (indent == 0 && rest[0] == '%') {
		return true
	}
	if s.flow == 0 {
		for len(s.indents) > 0 && s.indents[len(s.indents)-1] > indent {
			s.indents = s.indents[:len(s.indents)-1]
		}
		if len(s.indents) == 0 || s.indents[len(s.indents)-1] < indent {
			s.indents = append(s.indents, indent)
		}
	}
	return s.scan(line, indent, indent, 0)
}

func (s *yamlScan) depth(inline int) int { return len(s.indents) + inline + s.flow }

// scan reads line from i: at the start of a node in block context it
// follows indicators, and in flow context every bracket.
func (s *yamlScan) scan(line []byte, i, indent, inline int) bool {
	nodeStart := true
	for i < len(line) {
		c := line[i]
		if s.depth(inline) > MaxDepth {
			return false
		}
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return true
		case c == '"' || c == '\'':
			if !nodeStart {
				break
			}
			end := quoteEnd(line, i+1, c)
			if end < 0 {
				s.quote = c
				return true
			}
			i, nodeStart = end, false
			continue
		case s.flow > 0:
			switch c {
			case '[', '{':
				s.flow++
				nodeStart = true
			case ']', '}':
				s.flow--
				nodeStart = false
			case ',', ':', '?':
				nodeStart = true
			default:
				nodeStart = false
			}
			i++
			continue
		case !nodeStart:
			if c == ':' && (i+1 == len(line) || line[i+1] == ' ') {
				nodeStart = true
			}
		case (c == '-' || c == '?' || c == ':') && (i+1 == len(line) || line[i+1] == ' '):
			inline++
		case c == '[' || c == '{':
			s.flow++
		case c == '|' || c == '>':
			s.block = indent
			return true
		case c == '&' || c == '!':
			for i < len(line) && line[i] != ' ' {
				i++
			}
			continue
		default:
			nodeStart = false
		}
		i++
	}
	return s.depth(inline) <= MaxDepth
}

// quoteEnd returns the index after the quote that closes a scalar quoted
// with q, reading line from i, or -1 when it goes on to the next line.
func quoteEnd(line []byte, i int, q byte) int {
	for i < len(line) {
		switch c := line[i]; {
		case q == '"' && c == '\\':
			i += 2
		case c == q && q == '\'' && i+1 < len(line) && line[i+1] == '\'':
			i += 2
		case c == q:
			return i + 1
		default:
			i++
		}
	}
	return -1
}
