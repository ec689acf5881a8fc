package e2e

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// conformanceScript runs upstream's e2e.test against the lab.
const conformanceScript = "scripts/conformance.sh"

// conformanceTimeout bounds the subset run: building nothing (make e2e
// built e2e.test, ginkgo and the images), pushing the images and the
// upstream tests.
const conformanceTimeout = 30 * time.Minute

// conformanceLog is the file, beside the lab's other logs, that keeps the
// whole output of the subset run.
const conformanceLog = "conformance-subset.log"

// minConformanceSubset is the fewest upstream tests the subset must pass.
const minConformanceSubset = 20

// testConformanceSubset: upstream's own [Conformance] tests of the DNS and
// Services suites (e2e.test of the release the lab runs, from
// k8s.io/kubernetes/test/e2e) pass against the lab cluster, their images
// pulled through the lab registry mirror under their upstream names. At
// least minConformanceSubset of them run, none fails and none skips itself.
func testConformanceSubset(t *testing.T, l *lab) {
	if _, err := os.Stat(filepath.Join(l.k8sBin, "e2e.test")); err != nil {
		t.Skipf("SKIP: %s is missing: build it with scripts/build-k8s.sh --only e2e.test,ginkgo (make e2e does)", filepath.Join(l.k8sBin, "e2e.test"))
	}
	report := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(l.repo, conformanceScript), "--subset")
	cmd.Dir = l.repo
	cmd.Env = append(os.Environ(), "KCORE_LAB_DIR="+l.dir, "CONFORMANCE_REPORT_DIR="+report)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	// The whole output goes with the lab's logs, which a failed lab keeps:
	// each upstream test's own steps and retries are in it, not in the
	// JUnit report.
	if werr := os.WriteFile(filepath.Join(l.dir, "log", conformanceLog), out, 0o644); werr != nil {
		t.Logf("keep the conformance output: %v", werr)
	}
	t.Logf("%s --subset in %s: %s", conformanceScript, time.Since(start).Round(time.Second), summaryLine(string(out)))
	res, rerr := readJUnit(filepath.Join(report, "junit_01.xml"))
	if rerr != nil {
		t.Fatalf("%s --subset: %v; %v\n%s", conformanceScript, err, rerr, tail(string(out), 60))
	}
	for _, f := range res.failed {
		t.Errorf("upstream conformance test failed: %s: %s", f.name, f.message)
	}
	for _, name := range res.skipped {
		t.Errorf("upstream conformance test skipped itself: %s", name)
	}
	if len(res.passed) < minConformanceSubset {
		t.Errorf("%d upstream conformance tests passed, want at least %d", len(res.passed), minConformanceSubset)
	}
	if err != nil && !t.Failed() {
		t.Errorf("%s --subset: %v\n%s", conformanceScript, err, tail(string(out), 60))
	}
	if t.Failed() {
		t.Logf("output tail:\n%s", tail(string(out), 60))
	}
	t.Logf("upstream conformance subset: %d passed, %d failed, %d skipped", len(res.passed), len(res.failed), len(res.skipped))
}

// junitResult is what one e2e.test run did with the specs it focused on.
type junitResult struct {
	passed, skipped []string
	failed          []failedSpec
}

// failedSpec is a spec that failed and the first line of why, as the
// report's failure element says it.
type failedSpec struct{ name, message string }

// maxFailureMessage bounds the part of a failure message a test reports.
const maxFailureMessage = 400

// specPrefix starts the name of every spec in e2e.test's JUnit report.
const specPrefix = "[It] "

// errNoJUnit is returned for a report with no test case at all.
var errNoJUnit = errors.New("no test case in the JUnit report")

// readJUnit reads the report e2e.test --report-dir writes. It lists every
// spec of the suite ("[It] ..."); those the focus filtered out are skipped
// with the bare message "skipped", a focused spec that skipped itself says
// why. The suite's setup and report nodes are test cases too: they never
// count as passed, but a failed one is a failure.
func readJUnit(path string) (junitResult, error) {
	var res junitResult
	data, err := os.ReadFile(path)
	if err != nil {
		return res, fmt.Errorf("read JUnit report: %w", err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Status  string `xml:"status,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		return res, fmt.Errorf("decode JUnit report %s: %w", path, err)
	}
	n := 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			n++
			switch {
			case c.Status == "passed":
				if strings.HasPrefix(c.Name, specPrefix) {
					res.passed = append(res.passed, c.Name)
				}
			case c.Status == "skipped" || c.Status == "pending":
				if c.Skipped != nil && strings.HasPrefix(c.Skipped.Message, "skipped - ") {
					res.skipped = append(res.skipped, c.Name)
				}
			default:
				msg := "no failure message"
				if c.Failure != nil && strings.TrimSpace(c.Failure.Message) != "" {
					msg = failureLine(c.Failure.Message, maxFailureMessage)
				}
				res.failed = append(res.failed, failedSpec{c.Name, msg})
			}
		}
	}
	if n == 0 {
		return res, fmt.Errorf("read %s: %w", path, errNoJUnit)
	}
	return res, nil
}

// summaryLine is the line scripts/conformance.sh prints with its counts.
func summaryLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "conformance: ") {
			return l
		}
	}
	return "no summary line"
}

// failureLine is the first non-empty line of s, cut to at most n bytes at
// a rune boundary.
func failureLine(s string, n int) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > n {
				for n > 0 && !utf8.RuneStart(l[n]) {
					n--
				}
				l = l[:n] + "..."
			}
			return l
		}
	}
	return ""
}

// tail is the last n lines of out.
func tail(out string, n int) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestReadJUnit counts what e2e.test's report says of the focused specs:
// filtered-out specs ("skipped") are not counted, a spec that skipped itself
// is, every failure state is a failure with the first line of its message
// (bounded), the suite's passed setup and report nodes are no passed specs,
// and an empty report is an error.
func TestReadJUnit(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "junit_01.xml")
	const doc = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="7">
  <testsuite name="Kubernetes e2e suite" tests="7">
    <testcase name="[SynchronizedBeforeSuite]" status="passed"></testcase>
    <testcase name="[It] [sig-network] DNS should provide DNS for services [Conformance]" status="passed"></testcase>
    <testcase name="[It] [sig-network] Services should serve a basic endpoint from pods [Conformance]" status="failed"><failure message="Failed to connect to Service TCP port: timed out&#xA;second line" type="failed">boom</failure></testcase>
    <testcase name="[It] [sig-network] Services should be updated [Conformance]" status="timedout"><failure type="timedout">late</failure></testcase>
    <testcase name="[It] [sig-apps] Deployment something" status="skipped"><skipped message="skipped"></skipped></testcase>
    <testcase name="[It] [sig-network] DNS should resolve [Conformance]" status="skipped"><skipped message="skipped - only on GCE"></skipped></testcase>
    <testcase name="[ReportAfterSuite] Kubernetes e2e suite report" status="passed"></testcase>
  </testsuite>
</testsuites>`
	if err := os.WriteFile(report, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := readJUnit(report)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.passed) != 1 || len(res.failed) != 2 || len(res.skipped) != 1 {
		t.Fatalf("passed %v, failed %v, skipped %v; want 1, 2, 1", res.passed, res.failed, res.skipped)
	}
	if got, want := res.failed[0].message, "Failed to connect to Service TCP port: timed out"; got != want {
		t.Errorf("first failure's message %q, want %q", got, want)
	}
	if got, want := res.failed[1].message, "no failure message"; got != want {
		t.Errorf("second failure's message %q, want %q", got, want)
	}
	if got := failureLine("\n"+strings.Repeat("x", maxFailureMessage+50), maxFailureMessage); got != strings.Repeat("x", maxFailureMessage)+"..." {
		t.Errorf("a long message is cut to %d bytes, want %d and an ellipsis", len(got), maxFailureMessage)
	}
	if got := failureLine(strings.Repeat("x", maxFailureMessage-1)+"é", maxFailureMessage); got != strings.Repeat("x", maxFailureMessage-1)+"..." {
		t.Errorf("a message cut inside a rune: %q", got[len(got)-8:])
	}
	empty := filepath.Join(dir, "empty.xml")
	if err := os.WriteFile(empty, []byte(`<testsuites><testsuite name="x"></testsuite></testsuites>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readJUnit(empty); !errors.Is(err, errNoJUnit) {
		t.Fatalf("empty report: %v, want errNoJUnit", err)
	}
}
