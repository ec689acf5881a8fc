package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Terminal is implemented by a stdin reader or stdout writer that says
// itself whether it is an interactive terminal. Tests use it to force TTY
// mode; for any other reader or writer only an *os.File on a terminal is one.
type Terminal interface {
	IsTerminal() bool
}

// isTTY reports whether v (a Streams reader or writer) is an interactive terminal.
func isTTY(v any) bool {
	if t, ok := v.(Terminal); ok {
		return t.IsTerminal()
	}
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// errNoTTY is the refusal to ask a question nobody can answer.
var errNoTTY = errors.New("standard input is not a terminal")

// askYes writes question and " [y/N] " to s.Out and reads one line from
// s.In: only y or yes (any case, surrounding space ignored) is a yes; no,
// anything else and end of input are a no. It refuses with errNoTTY when
// s.In is not a terminal, so a script never answers by accident.
func askYes(s Streams, question string) (bool, error) {
	if !isTTY(s.In) {
		return false, errNoTTY
	}
	if _, err := fmt.Fprintf(s.Out, "%s [y/N] ", question); err != nil {
		return false, fmt.Errorf("write question: %w", err)
	}
	line, err := bufio.NewReader(s.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read answer: %w", err)
	}
	// A terminal echoes the answer itself; a reader that only says it is
	// one (a test, a wrapper) does not, so echo it to keep the
	// conversation readable, and end the line at end of input.
	_, isFile := s.In.(*os.File)
	if !isFile || !strings.HasSuffix(line, "\n") {
		echo := ""
		if !isFile {
			echo = strings.TrimRight(line, "\r\n")
		}
		if _, err := fmt.Fprintln(s.Out, echo); err != nil {
			return false, fmt.Errorf("write answer: %w", err)
		}
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
