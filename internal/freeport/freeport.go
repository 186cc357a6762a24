// Package freeport hands out loopback TCP ports for servers the harness
// starts but cannot hand a listener to (replicas, PostgreSQL).
//
// Asking the kernel for port 0 and closing the listener is racy in a way
// that bites under load: the port comes from the ephemeral range, the same
// range the kernel draws from for every outgoing connection, so between the
// close and the child's bind an outgoing connection may take it ("bind:
// address already in use"). A replica restarted on its fixed
// address runs the same race at every restart. Ports below the ephemeral
// range are never given to outgoing connections, so Port draws from there
// and checks each candidate by binding it.
//
// It imports no idemcheck package; harness/process and internal/pgcluster
// use it.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

const (
	floor = 10000 // below: well-known and registered services
	tries = 200
)

var (
	mu     sync.Mutex
	issued = map[int]bool{} // never hand out the same port twice in a process
)

// Port returns a port on 127.0.0.1 that was free a moment ago and lies
// outside the kernel's ephemeral range. When that range leaves no room
// below it, Port falls back to asking the kernel.
func Port() (int, error) {
	lo, hi := window()
	mu.Lock()
	defer mu.Unlock()
	if hi-lo >= 1000 {
		for range tries {
			p := lo + rand.IntN(hi-lo)
			if issued[p] || !bindable(p) {
				continue
			}
			issued[p] = true
			return p, nil
		}
	}
	for range tries {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("free port: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !issued[p] {
			issued[p] = true
			return p, nil
		}
	}
	return 0, fmt.Errorf("free port: no free port found in %d tries", tries)
}

func bindable(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// window is [floor, start of the ephemeral range), read from Linux's
// ip_local_port_range; elsewhere the IANA dynamic range start (49152).
func window() (lo, hi int) {
	hi = 49152
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				hi = v
			}
		}
	}
	return floor, hi
}
