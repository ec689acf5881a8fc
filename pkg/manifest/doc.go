// Package manifest reads kcore manifests — YAML (multi-document, kind aliases)
// and HCL (`resource "kcore_…" "NAME" { … }`) files or whole directories — into
// pkg/api objects, keeping the file:line of every field and list element so that
// every problem, whether found while reading or by api validation, is reported
// as `file:line: field.path: message`. In HCL the position has a column and
// the field is named as written in HCL (Document.FieldPath); a YAML syntax
// error is placed at its offending character.
//
// Readers are strict: an unknown field is an error with a "did you mean"
// suggestion, computed against the field names of the pkg/api Go types (YAML
// uses their camelCase tags, HCL the snake_case form of the same tags), so a new
// field in pkg/api is accepted by both readers without touching this package.
//
// Both readers refuse input nested deeper than MaxDepth, found by a linear
// pre-scan that skips strings and comments, before the recursive YAML or
// HCL parser sees it.
//
// A `status` section in a YAML manifest is ignored: status is set by the
// controller, and ignoring it lets `kctl … get -o yaml` output be applied back.
package manifest
