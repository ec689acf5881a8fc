package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
)

type auditOptions struct {
	since, object, output string
	limit                 int
}

func newAuditCmd(s Streams) *cobra.Command {
	var o auditOptions
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show who changed what, when, and with which result",
		Long: `Show the controller's audit log: every mutating call (applies, deletes, tokens,
certificates, membership, snapshots), including refused ones, with who made it
(certificate name and role), what it touched and the result. Failed requests
without a client certificate (bad join tokens, garbage) are not listed one by
one: each replica writes one summary of them per interval, shown as
"anonymous failures on REPLICA". The log is replicated with the rest of the
state. Values holding control characters are printed quoted, Go-style; -o json
prints them as they are.`,
		Example: `  kctl audit --since 1h
  kctl audit --object KubernetesCluster/lab --limit 20
  kctl audit --since 2026-11-29T08:00:00Z -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAudit(cmd, s, o, time.Now())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.since, "since", "", "only entries newer than a duration (e.g. 1h, 30m) or an RFC 3339 time")
	f.StringVar(&o.object, "object", "", "only entries about kind/name (or a whole kind)")
	f.IntVar(&o.limit, "limit", 0, "at most this many entries, the newest (default: the controller's, 1000)")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// parseSince reads --since: a duration back from now, or an RFC 3339 time.
func parseSince(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %q: want a positive duration", v)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since %q: want a duration such as 1h or an RFC 3339 time such as 2026-11-29T08:00:00Z", v)
	}
	return t, nil
}

func runAudit(cmd *cobra.Command, s Streams, o auditOptions, now time.Time) error {
	since, err := parseSince(o.since, now)
	if err != nil {
		return err
	}
	if o.limit < 0 {
		return fmt.Errorf("--limit %d: want a positive number", o.limit)
	}
	if err := checkOutput(o.output); err != nil {
		return err
	}
	c, _, err := ctlClient(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	entries, err := c.Audit(cmdContext(cmd), client.AuditQuery{Since: since, Object: o.object, Limit: o.limit})
	if err != nil {
		return fmt.Errorf("read audit log: %w", err)
	}
	if done, err := printStructured(s, entries, o.output); done {
		return err
	}
	return printAudit(s, entries)
}

// printAudit prints entries as a table. Every value is passed through
// cell, so no name, however it was spelled, can start a line, shift a
// column or reach the terminal as an escape sequence.
func printAudit(s Streams, entries []apiv1.AuditEntry) error {
	tw := newTable(s.Out)
	if err := row(tw, "TIME", "WHO", "ROLE", "ACTION", "OBJECT", "RESULT"); err != nil {
		return err
	}
	for _, e := range entries {
		who, role, object := cell(e.Subject), cell(e.Role), cell(e.Object)
		if e.Subject == "" {
			who = "(anonymous)"
		}
		if e.Role == "" {
			role = "-"
		}
		if e.Summary != nil {
			object = summaryCell(e.Summary)
		} else if e.Object == "" {
			object = "-"
		}
		result := strconv.Itoa(e.Result)
		if e.Code != "" {
			result += " " + cell(e.Code)
		}
		if err := row(tw, cell(auditTime(e.Time)), who, role, cell(auditAction(e)), object, result); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// cell is v as a table cell: as it is when every rune is printable (a
// space is, a tab is not), otherwise quoted with strconv.Quote, which
// escapes newlines, tabs, ESC, other control and format characters and
// invalid UTF-8.
func cell(v string) string {
	if !utf8.ValidString(v) {
		return strconv.Quote(v)
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return strconv.Quote(v)
		}
	}
	return v
}

// summaryCell describes a summary of anonymous failures in one cell:
// "anonymous failures on r1: 12 (bad-request 10, join-refused 2) from 3
// sources, most from 10.0.0.9 (8)".
func summaryCell(sum *apiv1.AnonymousSummary) string {
	reasons := make([]string, 0, len(sum.Reasons))
	for reason, n := range sum.Reasons {
		reasons = append(reasons, cell(reason)+" "+strconv.FormatUint(n, 10))
	}
	sort.Strings(reasons)
	out := fmt.Sprintf("anonymous failures on %s: %d (%s) from %d sources", cell(sum.Replica), sum.Total, strings.Join(reasons, ", "), sum.Sources)
	if len(sum.TopSources) > 0 {
		top := sum.TopSources[0]
		out += fmt.Sprintf(", most from %s (%d)", cell(top.Source), top.Count)
	}
	return out
}

// auditAction is the call's method and route; a route pattern that
// already starts with its method is shown as it is.
func auditAction(e apiv1.AuditEntry) string {
	if e.Action != "" {
		return e.Action
	}
	if strings.HasPrefix(e.Route, e.Method+" ") || e.Method == "" {
		return e.Route
	}
	return e.Method + " " + e.Route
}

// auditTime shortens a leader stamp to whole seconds in UTC; a stamp that
// does not parse is shown as it is.
func auditTime(stamp string) string {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return stamp
	}
	return t.UTC().Format(time.RFC3339)
}
