package etcdsnap

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// Defaults of Taker.
const (
	// DefaultTimeout bounds one snapshot download.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxSize is the largest snapshot taken (etcd's default quota is 2 GiB).
	DefaultMaxSize = 2 << 30
)

// Errors of Take; test with errors.Is.
var (
	// ErrNoEtcd means no control plane's etcd answered.
	ErrNoEtcd = errors.New("no etcd endpoint answered")
	// ErrInvalid means what etcd sent is not a usable snapshot.
	ErrInvalid = errors.New("invalid etcd snapshot")
)

// Snapshot is one snapshot as etcd streamed it.
type Snapshot struct {
	// Data is the etcd database file, as etcdutl snapshot restore reads it.
	Data []byte
	// Member is the control plane whose etcd answered.
	Member string
	// SHA256 is the hex SHA-256 of Data.
	SHA256 string
	// Revision is the etcd revision the snapshot holds.
	Revision int64
}

// Taker streams snapshots through etcd's v3 JSON gateway.
type Taker struct {
	// Timeout bounds one download (default DefaultTimeout).
	Timeout time.Duration
	// MaxSize refuses larger snapshots (default DefaultMaxSize).
	MaxSize int64
	// Endpoint maps a control plane's address to etcd's base URL; nil means
	// https://<address>:2379.
	Endpoint func(address string) string
	// TempDir holds the snapshot while bbolt verifies it; "" is os.TempDir.
	TempDir string
}

// Take streams a snapshot from the first control plane of c whose etcd
// answers, trying each in turn, and verifies it (Verify). A control plane
// whose etcd answered with an error or a broken snapshot is skipped too:
// another member may still serve a good one.
func (t *Taker) Take(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets) (*Snapshot, error) {
	var errs []error
	for _, n := range c.Spec.ControlPlaneNodes {
		snap, err := t.takeFrom(ctx, c, s, n)
		if err == nil {
			return snap, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("take etcd snapshot of %s: %w", c.Metadata.Name, ctx.Err())
		}
		errs = append(errs, fmt.Errorf("%s: %w", n.NodeID, err))
	}
	return nil, fmt.Errorf("take etcd snapshot of %s: %w: %w", c.Metadata.Name, ErrNoEtcd, errors.Join(errs...))
}

func (t *Taker) takeFrom(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, n api.ClusterNode) (*Snapshot, error) {
	cp := s.ControlPlanes[n.NodeID]
	if cp == nil || len(cp.APIServerEtcdClient.CertPEM) == 0 {
		return nil, errors.New("no etcd client certificate")
	}
	snap, err := t.TakeURL(ctx, t.base(c, n.AdvertiseAddress), s.EtcdTrust(), cp.APIServerEtcdClient)
	if err != nil {
		return nil, err
	}
	snap.Member = n.NodeID
	return snap, nil
}

// TakeURL streams a snapshot from the etcd member at base (https://host:port),
// trusting caPEM and presenting cert, and verifies it (Verify). The
// snapshot's Member is left empty.
func (t *Taker) TakeURL(ctx context.Context, base string, caPEM []byte, cert pki.KeyPair) (*Snapshot, error) {
	client, err := httpsClient(caPEM, cert)
	if err != nil {
		return nil, err
	}
	defer client.CloseIdleConnections()
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := base + "/v3/maintenance/snapshot"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("POST %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	limit := t.MaxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	data, err := ReadStream(resp.Body, limit)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", url, err)
	}
	rev, err := Verify(data, t.TempDir)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", url, err)
	}
	sum := sha256.Sum256(data)
	return &Snapshot{Data: data, SHA256: hex.EncodeToString(sum[:]), Revision: rev}, nil
}

// base is etcd's URL on a control plane of c, on the client port of c's
// layout.
func (t *Taker) base(c *api.KubernetesCluster, address string) string {
	if t.Endpoint != nil {
		return t.Endpoint(address)
	}
	return "https://" + net.JoinHostPort(address, strconv.Itoa(render.ClusterLayout(c).EtcdClientPort))
}

// streamMessage is one line of the gateway's snapshot stream: a result
// with a chunk of the database, or an error.
type streamMessage struct {
	Result *struct {
		Blob []byte `json:"blob"`
		// The gateway writes int64 as a string, under either spelling.
		RemainingBytes  json.RawMessage `json:"remainingBytes"`
		RemainingBytes2 json.RawMessage `json:"remaining_bytes"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ReadStream reads the gateway's snapshot stream (JSON messages
// {"result":{"blob":"<base64>","remainingBytes":"N"}}, one after the other)
// and returns the concatenated blobs. It fails on an error message, on a
// stream that ends before a message says no bytes remain, and past limit bytes.
func ReadStream(r io.Reader, limit int64) ([]byte, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	var out bytes.Buffer
	done := false
	for {
		var m streamMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read snapshot stream: %w: %w", ErrInvalid, err)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("read snapshot stream: etcd: %s (code %d)", m.Error.Message, m.Error.Code)
		}
		if m.Result == nil {
			return nil, fmt.Errorf("read snapshot stream: %w: a message without result", ErrInvalid)
		}
		if int64(out.Len()+len(m.Result.Blob)) > limit {
			return nil, fmt.Errorf("read snapshot stream: %w: over %d bytes", ErrInvalid, limit)
		}
		out.Write(m.Result.Blob)
		remaining := m.Result.RemainingBytes
		if len(remaining) == 0 {
			remaining = m.Result.RemainingBytes2
		}
		n, err := parseInt(remaining)
		if err != nil {
			return nil, fmt.Errorf("read snapshot stream: %w: remainingBytes %s", ErrInvalid, remaining)
		}
		done = n == 0
	}
	if !done || out.Len() == 0 {
		return nil, fmt.Errorf("read snapshot stream: %w: the stream ended after %d bytes before the last chunk", ErrInvalid, out.Len())
	}
	return out.Bytes(), nil
}

// parseInt reads a JSON number or a number in a string; absent is 0 (the
// gateway leaves zero values out).
func parseInt(raw json.RawMessage) (int64, error) {
	s := strings.Trim(string(raw), `"`)
	if s == "" || s == "null" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// httpsClient trusts caPEM and presents cert; it has no overall timeout
// (the caller's context bounds a download).
func httpsClient(caPEM []byte, cert pki.KeyPair) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no etcd CA certificate")
	}
	pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load etcd client certificate: %w", err)
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:       &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}}, nil
}
