package manifest

import (
	"strings"
	"testing"
)

func TestCheckPositionsIssues(t *testing.T) {
	src := yamlCluster + `  highAvailability:
    enabled: true
  workerNodes:
    - nodeId: node-105
      advertiseAddress: 192.168.40.106
      iface: "a/b"
`
	docs, ds := ParseYAML("c.yaml", []byte(src))
	if len(ds) != 0 {
		t.Fatalf("parse:\n%s", diagStrings(ds))
	}
	want := `c.yaml:12: spec.highAvailability.vipAddress: required when highAvailability.enabled is true
c.yaml:12: spec.highAvailability.vipInterface: required when highAvailability.enabled is true
c.yaml:15: spec.workerNodes[0].nodeId: duplicate node id "node-105" (also spec.controlPlaneNodes[0])
c.yaml:17: spec.workerNodes[0].iface: "a/b" is not a valid Linux interface name (1 to 15 characters, no '/', ':' or spaces)
`
	got := Check(docs)
	if diagStrings(got) != want {
		t.Errorf("check:\n%s\nwant:\n%s", diagStrings(got), want)
	}
	if !got.HasErrors() || got.Err() == nil || len(got.Warnings()) != 0 || len(got.Errors()) != 4 {
		t.Errorf("HasErrors/Err/Warnings/Errors disagree on %v", got)
	}
	if !strings.Contains(got.Error(), "\nc.yaml:15: spec.workerNodes[0].nodeId") {
		t.Errorf("Error() = %q", got.Error())
	}
}
