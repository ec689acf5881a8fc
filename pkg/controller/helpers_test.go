package controller

import (
	"io"
	"net"
	"strings"

	"github.com/hashicorp/raft"
)

func jsonBody(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

func raftAddr(a net.Addr) raft.ServerAddress { return raft.ServerAddress(a.String()) }
