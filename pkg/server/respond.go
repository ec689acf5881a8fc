package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"kcore.dev/kcore/pkg/apiv1"
)

// DefaultMaxBody is the request body limit of every route but snapshot restore.
const DefaultMaxBody = 4 << 20

// MaxSnapshotBody is the request body limit of PUT /v1/snapshot.
const MaxSnapshotBody = 1 << 30

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(apiv1.ErrorBody{Code: apiv1.CodeInternal, Message: fmt.Sprintf("encode response: %v", err)})
	}
	w.Header().Set("Content-Type", apiv1.ContentTypeJSON)
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, apiv1.StatusFor(e.body.Code), e.body)
}

func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set(apiv1.HeaderIndex, strconv.FormatUint(index, 10))
}

// decodeStrict decodes exactly one JSON value from r into v, refusing
// unknown fields and trailing data. An over-limit body surfaces as
// *http.MaxBytesError (mapped to 413).
func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if errors.Is(err, io.EOF) {
			return badRequest("decode body: empty body")
		}
		return badRequest("decode body: %v", err)
	}
	if err := dec.Decode(&json.RawMessage{}); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("decode body: data after the JSON value")
	}
	return nil
}

// readJSONValue reads a body that must be one valid JSON value, compacted.
// json.Compact validates and compacts in one pass over the body (a
// decoder would scan it twice and Compact once more).
func readJSONValue(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, badRequest("decode body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("decode body: empty body")
	}
	var buf bytes.Buffer
	buf.Grow(len(body))
	if err := json.Compact(&buf, body); err != nil {
		return nil, badRequest("decode body: %v", err)
	}
	return buf.Bytes(), nil
}
