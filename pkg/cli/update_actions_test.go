package cli

import (
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
)

// TestUpdateCommandsAreActions: every kctl update command that changes the
// update calls the controller's route of the same name, and the controller
// serves the actions apiv1 lists, so the two lists must be the same. delete
// is the exception: it removes the update through plan and apply.
func TestUpdateCommandsAreActions(t *testing.T) {
	update, _, err := NewKctl(Streams{}).Find([]string{"update"})
	if err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, c := range update.Commands() {
		switch c.Name() {
		case "status", "list", "help", "completion", "delete":
			continue
		}
		writes = append(writes, c.Name())
	}
	slices.Sort(writes)
	want := slices.Sorted(slices.Values(apiv1.UpdateActions()))
	if !slices.Equal(writes, want) {
		t.Fatalf("kctl update changes %v, the controller serves actions %v", writes, want)
	}
}

func TestAuditShowsActionByName(t *testing.T) {
	if got := auditAction(apiv1.AuditEntry{Method: "POST", Route: "POST /v1/updates/{name}/approve", Action: "approve update"}); got != "approve update" {
		t.Errorf("action shown as %q", got)
	}
	if got := auditAction(apiv1.AuditEntry{Method: "POST", Route: "POST /v1/apply"}); got != "POST /v1/apply" {
		t.Errorf("an entry without an action shows %q, want its route", got)
	}
}
