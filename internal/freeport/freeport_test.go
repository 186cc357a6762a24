package freeport

import (
	"net"
	"strconv"
	"testing"
)

// Every port handed out lies below the ephemeral range (where no outgoing
// connection can take it), is bindable, and is never handed out twice.
func TestPort_OutsideEphemeralRangeAndDistinct(t *testing.T) {
	lo, hi := window()
	seen := map[int]bool{}
	for range 300 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if hi-lo >= 1000 && (p < lo || p >= hi) {
			t.Fatalf("port %d outside [%d, %d)", p, lo, hi)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	p, _ := Port()
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatalf("port %d not bindable: %v", p, err)
	}
	l.Close()
}

// A port already bound by someone else is never handed out.
func TestPort_SkipsBoundPorts(t *testing.T) {
	lo, hi := window()
	if hi-lo < 1000 {
		t.Skip("no room below the ephemeral range on this machine")
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	bound := map[int]bool{}
	for p := lo; p < lo+500; p++ {
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			held = append(held, l)
			bound[p] = true
		}
	}
	for range 300 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if bound[p] {
			t.Fatalf("port %d is bound by the test but was handed out", p)
		}
	}
}
