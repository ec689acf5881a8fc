package api

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"kcore.dev/kcore/pkg/render/kubeflags"
)

// Bounds of spec.*.extraArgs.
const (
	// MaxExtraArgs is the most extra flags one component takes.
	MaxExtraArgs = 32
	// MaxExtraArgNameLen is the longest flag name, in bytes.
	MaxExtraArgNameLen = 63
	// MaxExtraArgValueLen is the longest flag value, in bytes.
	MaxExtraArgValueLen = 1024
)

// extraArgName is a flag name as Kubernetes components spell them: lowercase
// words joined by dashes, no leading dash, no '='.
var extraArgName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// validateExtraArgs checks every component's extraArgs: bounded, safe flag
// names, values that are one argv entry each, and no flag kcore sets
// itself (kubeflags.Owned, the list the renderer builds argv from).
func validateExtraArgs(v *collector, s *ClusterSpec) {
	for _, comp := range kubeflags.Components() {
		args := s.ExtraArgs(comp)
		base := "spec." + comp + ".extraArgs"
		if len(args) > MaxExtraArgs {
			v.errorf(base, "%d flags; at most %d per component", len(args), MaxExtraArgs)
			continue
		}
		for _, name := range sortedKeys(args) {
			p := base + "." + name
			val := args[name]
			switch {
			case len(name) > MaxExtraArgNameLen:
				v.errorf(p, "flag name is %d bytes; at most %d", len(name), MaxExtraArgNameLen)
			case !extraArgName.MatchString(name):
				v.errorf(p, "%q is not a flag name: lowercase letters, digits and single dashes, without the leading -- and without =", name)
			case kubeflags.IsOwned(comp, name):
				v.errorf(p, "set by kcore (%s --%s=…); kcore owns this flag, remove it from extraArgs", kubeflags.Binary(comp), name)
			case len(val) > MaxExtraArgValueLen:
				v.errorf(p, "value is %d bytes; at most %d", len(val), MaxExtraArgValueLen)
			case !utf8.ValidString(val) || strings.ContainsFunc(val, isControl):
				v.errorf(p, "value holds a control character or invalid UTF-8; it is passed as one argv entry")
			}
		}
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
