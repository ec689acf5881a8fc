package manifest

import (
	"strconv"
	"strings"
)

// suggest returns the allowed name closest to got, or "" when none is close:
// case, '_' and '-' are ignored, then at most a third of the letters may differ.
func suggest(got string, allowed []string) string {
	best, d := Closest(got, allowed)
	if d < 0 || d > max(1, len(normalizeName(got))/3) {
		return ""
	}
	return best
}

// Closest returns the candidate nearest to got by edit distance, ignoring
// case, '_' and '-' (ties go to the first), and that distance; -1 when there
// are no candidates.
func Closest(got string, candidates []string) (string, int) {
	best, bestD := "", -1
	g := normalizeName(got)
	for _, c := range candidates {
		if d := levenshtein(g, normalizeName(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best, bestD
}

func normalizeName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
}

// unknownMessage says a name is not allowed, with a suggestion or the list of
// allowed names.
func unknownMessage(what, got string, allowed []string) string {
	if s := suggest(got, allowed); s != "" {
		return "unknown " + what + " " + quote(got) + ", did you mean " + quote(s) + "?"
	}
	return "unknown " + what + " " + quote(got) + ", expected one of " + strings.Join(allowed, ", ")
}

func quote(s string) string { return strconv.Quote(s) }

// levenshtein is the edit distance between a and b, in bytes.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
