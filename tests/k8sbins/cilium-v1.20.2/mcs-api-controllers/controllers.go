// Package controllers holds the one name Cilium takes from the MCS API
// controllers module, which the Go module proxy here does not serve.
package controllers

// DerivedServiceAnnotation names the Service derived from a ServiceImport.
const DerivedServiceAnnotation = "multicluster.kubernetes.io/derived-service"
