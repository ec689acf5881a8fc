package cli

import (
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
)

// TestUpdateCommandsAreIntents: every kctl update command that writes the
// update declares its name as the write's intent, and the controller only
// accepts the intents apiv1 lists, so the two lists must be the same.
func TestUpdateCommandsAreIntents(t *testing.T) {
	update, _, err := NewKctl(Streams{}).Find([]string{"update"})
	if err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, c := range update.Commands() {
		switch c.Name() {
		case "status", "list", "help", "completion":
			continue
		}
		writes = append(writes, c.Name())
	}
	slices.Sort(writes)
	want := slices.Sorted(slices.Values(apiv1.UpdateIntents()))
	if !slices.Equal(writes, want) {
		t.Fatalf("kctl update writes %v, the controller accepts intents %v", writes, want)
	}
}

func TestAuditShowsActionByName(t *testing.T) {
	if got := auditAction(apiv1.AuditEntry{Method: "PUT", Route: "PUT /v1/objects/{kind}/{name...}", Action: "approve"}); got != "approve" {
		t.Errorf("action shown as %q", got)
	}
	if got := auditAction(apiv1.AuditEntry{Method: "POST", Route: "POST /v1/apply"}); got != "POST /v1/apply" {
		t.Errorf("an entry without an action shows %q, want its route", got)
	}
}
