package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// humanBytes renders a byte count in binary units: 53687091200 is "50 GiB",
// 1610612736 is "1.5 GiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / unit
	i := 0
	for (v >= unit || v <= -unit) && i < len(units)-1 {
		v /= unit
		i++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[i]
}

// millis renders a latency in milliseconds with one decimal.
func millis(f float64) string {
	return strconv.FormatFloat(f, 'f', 1, 64) + " ms"
}

// names joins node ids for messages: "node-105, node-107 and node-103".
func names(ids []string) string {
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return ids[0]
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}

// plural renders "1 failure", "2 failures".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
