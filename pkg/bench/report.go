package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// Figure is one row of the table and one object of results.json.
type Figure struct {
	// ID orders and names the row, e.g. "1/64".
	ID string `json:"id"`
	// Name says what is measured.
	Name string `json:"name"`
	// Unit of Value, Reference and Spread.
	Unit string `json:"unit"`
	// Value is the median over Runs; nil when not measured.
	Value *float64 `json:"value"`
	// ReferenceName says what the reference is (etcd 3.7.3, a target, …).
	ReferenceName string `json:"referenceName,omitempty"`
	// Reference is the reference's median in Unit, nil when there is none.
	Reference *float64 `json:"reference,omitempty"`
	// Ratio is Value/Reference when both are set.
	Ratio *float64 `json:"ratio,omitempty"`
	// Target is the goal in words, e.g. "ratio >= 1.0".
	Target string `json:"target,omitempty"`
	// Met says whether Target is met; nil when there is no target or no value.
	Met *bool `json:"met,omitempty"`
	// Runs is how many runs the median is over.
	Runs int `json:"runs"`
	// Spread is the min and max of Value over the runs.
	Spread *Spread `json:"spread,omitempty"`
	// Note explains how it was measured or why it was not.
	Note string `json:"note,omitempty"`
}

// Report is results.json.
type Report struct {
	// Machine describes where and under what load it ran.
	Machine Machine `json:"machine"`
	// Started and Finished are RFC 3339 UTC.
	Started  string `json:"started"`
	Finished string `json:"finished"`
	// Figures in table order.
	Figures []Figure `json:"figures"`
}

// measured returns a figure with its median and spread over runs. Runs
// without a value (NaN: a latency of a run where no request succeeded) are
// left out; with none left the figure has no value and says why (JSON has
// no NaN, so the report could not be written otherwise).
func measured(id, name, unit string, runs []float64) Figure {
	var ok []float64
	for _, r := range runs {
		if !math.IsNaN(r) {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return Figure{ID: id, Name: name, Unit: unit, Runs: len(runs), Note: "no value: no request succeeded in any run"}
	}
	m := Median(ok)
	sp := SpreadOf(ok)
	return Figure{ID: id, Name: name, Unit: unit, Value: &m, Runs: len(ok), Spread: &sp}
}

// notMeasured returns a row that says why it has no value.
func notMeasured(id, name, why string) Figure {
	return Figure{ID: id, Name: name, Note: "not measured: " + why}
}

// withReference sets the reference and the ratio.
func (f Figure) withReference(name string, ref float64) Figure {
	if math.IsNaN(ref) {
		return f.withNote(name + ": no value, no request succeeded in any run")
	}
	f.ReferenceName = name
	f.Reference = &ref
	if f.Value != nil && ref != 0 && !math.IsNaN(ref) {
		r := *f.Value / ref
		f.Ratio = &r
	}
	return f
}

// withTarget sets the target and whether it is met.
func (f Figure) withTarget(target string, met bool) Figure {
	f.Target = target
	if f.Value != nil {
		f.Met = &met
	}
	return f
}

// withNote appends a note.
func (f Figure) withNote(note string) Figure {
	if f.Note != "" {
		f.Note += "; "
	}
	f.Note += note
	return f
}

// WriteJSON writes the report to path.
func (r Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// PrintTable writes the table: figure, value, reference, ratio, target, met.
func (r Report) PrintTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tVALUE (median [min-max], runs)\tREFERENCE\tRATIO\tTARGET\tMET?")
	for _, f := range r.Figures {
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%s\t%s\n", f.ID, f.Name, valueCell(f), refCell(f), ratioCell(f), f.Target, metCell(f))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("print table: %w", err)
	}
	fmt.Fprintf(w, "\nmachine: %s\n", r.Machine)
	return nil
}

func valueCell(f Figure) string {
	if f.Value == nil {
		return f.Note
	}
	s := num(*f.Value) + " " + f.Unit
	if f.Spread != nil && f.Runs > 1 {
		s += fmt.Sprintf(" [%s-%s]", num(f.Spread.Min), num(f.Spread.Max))
	}
	return s + fmt.Sprintf(" n=%d", f.Runs)
}

func refCell(f Figure) string {
	if f.Reference == nil {
		return f.ReferenceName
	}
	return fmt.Sprintf("%s %s (%s)", num(*f.Reference), f.Unit, f.ReferenceName)
}

func ratioCell(f Figure) string {
	if f.Ratio == nil {
		return ""
	}
	return num(*f.Ratio)
}

func metCell(f Figure) string {
	switch {
	case f.Met == nil:
		return ""
	case *f.Met:
		return "yes"
	}
	return "NO"
}

// num prints a value with about three significant digits.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "n/a"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

// stamp formats t for the report.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// thousands writes n with comma thousands separators (5000 → "5,000").
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
