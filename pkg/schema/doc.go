// Package schema generates the JSON Schemas (draft 2020-12) in schemas/ from
// the Go types of pkg/api: one document per kind, with field descriptions
// read from the doc comments in pkg/api's source, required fields from the
// json tags, and allowed values and defaults from a small table checked
// against pkg/api's constants, defaults and validation.
//
// It runs only from the repository (`make schemas`, and the staleness test),
// never in a deployed binary's normal paths.
package schema
