package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestServePprof: with IDEMCHECK_PPROF set, the process's heap profile is
// served there; an address already taken is named on stderr.
func TestServePprof(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv(pprofEnv, addr)
	servePprof(io.Discard)
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "heap profile") {
		t.Errorf("GET heap: %d %.40q", resp.StatusCode, body)
	}
	var stderr strings.Builder
	servePprof(&stderr) // the address is taken now
	if !strings.Contains(stderr.String(), pprofEnv+"="+addr) {
		t.Errorf("stderr %q: want the variable and the address named", stderr.String())
	}
}
