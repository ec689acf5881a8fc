package cli

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"kcore.dev/kcore/pkg/apiv1"
)

// forged are audit entries whose names try to forge table lines or
// terminal escapes.
func forged() []apiv1.AuditEntry {
	return []apiv1.AuditEntry{
		{
			Time: "2026-11-29T12:00:00Z", Subject: "mallory\n2026-11-29T12:00:01Z   alice   cluster-admin   DELETE",
			Role: "viewer", Method: "PUT", Route: "PUT /v1/objects/{kind}/{name...}",
			Object: "KubernetesCluster/x\x1b[2J\x1b[1;1H", Result: 403, Code: "forbidden",
		},
		{
			Time: "2026-11-29T12:00:02Z\r", Subject: "tab\there", Role: "node\x07", Method: "POST\x00",
			Route: "POST /v1/nodes/{id}/heartbeat\u202e", Object: "Node/n1\u0085", Result: 200, Code: "ok\x9b31m",
		},
		{
			Time: "2026-11-29T12:00:03Z", Subject: "controller", Role: "controller", Method: "POST",
			Route: "POST /v1/audit/summaries", Result: 200,
			Summary: &apiv1.AnonymousSummary{
				Replica: "r1\n", Total: 3, Reasons: map[string]uint64{"bad-request\x1b[0m": 3},
				TopSources: []apiv1.SourceCount{{Source: "127.0.0.1", Count: 3}}, Sources: 1,
			},
		},
		{Time: "2026-11-29T12:00:04Z", Subject: "bob", Role: "operator", Method: "PUT", Route: "PUT /v1/objects/{kind}/{name...}", Object: "Plain/name with spaces", Result: 200},
	}
}

func TestAuditTableEscapesControlCharacters(t *testing.T) {
	var out bytes.Buffer
	if err := printAudit(Streams{Out: &out}, forged()); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 1+len(forged()) {
		t.Fatalf("table has %d lines, want a header and %d rows:\n%s", len(lines), len(forged()), text)
	}
	for _, r := range text {
		if r != '\n' && !unicode.IsPrint(r) {
			t.Fatalf("table holds non-printable %U:\n%q", r, text)
		}
	}
	for _, want := range []string{
		`"mallory\n2026-11-29T12:00:01Z   alice   cluster-admin   DELETE"`,
		`"KubernetesCluster/x\x1b[2J\x1b[1;1H"`,
		`"tab\there"`, `"node\a"`, `"Node/n1\u0085"`, `\u202e`,
		`"r1\n"`, `\x1b[0m`,
		"Plain/name with spaces",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, `"Plain/name with spaces"`) {
		t.Errorf("a printable name was quoted:\n%s", text)
	}
}

func TestAuditJSONKeepsNamesAsTheyAre(t *testing.T) {
	var out bytes.Buffer
	if err := printJSON(Streams{Out: &out}, forged()); err != nil {
		t.Fatal(err)
	}
	var back []apiv1.AuditEntry
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	// JSON carries the names as they are (invalid UTF-8 becomes U+FFFD,
	// as encoding/json always does).
	raw, err := json.Marshal(forged())
	if err != nil {
		t.Fatal(err)
	}
	var want []apiv1.AuditEntry
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("json output changed the entries:\n got %+v\nwant %+v", back, want)
	}
}
