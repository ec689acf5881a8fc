package api

import (
	"fmt"
	"strings"
)

// Severity says whether an Issue blocks (error) or only informs (warning).
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Issue is one validation finding at a field path such as
// spec.highAvailability.vipAddress or spec.controlPlaneNodes[1].nodeId.
type Issue struct {
	Severity Severity `json:"severity"`
	Path     string   `json:"path"`
	Message  string   `json:"message"`
}

// Error formats the issue as "path: message".
func (i Issue) Error() string {
	if i.Path == "" {
		return i.Message
	}
	return i.Path + ": " + i.Message
}

// Issues is a list of findings in the order they were found.
type Issues []Issue

// HasErrors reports whether any issue is an error.
func (is Issues) HasErrors() bool {
	for _, i := range is {
		if i.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns only the errors.
func (is Issues) Errors() Issues { return is.filter(SeverityError) }

// Warnings returns only the warnings.
func (is Issues) Warnings() Issues { return is.filter(SeverityWarning) }

func (is Issues) filter(s Severity) Issues {
	var out Issues
	for _, i := range is {
		if i.Severity == s {
			out = append(out, i)
		}
	}
	return out
}

// Error joins every issue on its own line, so Issues can be returned as an error.
func (is Issues) Error() string {
	lines := make([]string, len(is))
	for n, i := range is {
		lines[n] = string(i.Severity) + ": " + i.Error()
	}
	return strings.Join(lines, "\n")
}

// collector accumulates issues under path prefixes.
type collector struct{ issues Issues }

func (c *collector) errorf(path, format string, args ...any) {
	c.issues = append(c.issues, Issue{Severity: SeverityError, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *collector) warnf(path, format string, args ...any) {
	c.issues = append(c.issues, Issue{Severity: SeverityWarning, Path: path, Message: fmt.Sprintf(format, args...)})
}

// index formats a list element path: index("spec.workerNodes", 2) = "spec.workerNodes[2]".
func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }
