package server

import (
	"io"
	"net/http"
)

type nopWriter struct{}

func (nopWriter) Header() http.Header         { return http.Header{} }
func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (nopWriter) WriteHeader(int)             {}

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }
