//go:build linux || darwin || freebsd

package reference

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// quiet tells an idle connection from one whose peer closed it or sent
// something, and leaves any byte it saw to be read.
func TestQuiet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (client, server net.Conn) {
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				t.Error(err)
			}
			accepted <- c
		}()
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server = <-accepted
		t.Cleanup(func() { client.Close(); server.Close() })
		return client, server
	}
	// until waits, bounded, for quiet(c) to become want: a byte or a FIN
	// sent on loopback arrives after the sender's call returns.
	until := func(cond func() bool, want bool) bool {
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			if cond() == want {
				return true
			}
		}
		return false
	}
	quietNow := func(c net.Conn) func() bool { return func() bool { return quiet(c) } }

	idle, _ := pair()
	if !quiet(idle) {
		t.Fatal("an idle connection is not quiet")
	}

	// A read parked on the connection (pgconn's background reader) must
	// not hold quiet up.
	parked, _ := pair()
	go parkRead(parked)
	if !until(func() bool { return strings.Contains(goroutines(), "reference.parkRead") }, true) {
		t.Fatal("the read never parked")
	}
	looked := make(chan bool, 1)
	go func() { looked <- quiet(parked) }()
	select {
	case q := <-looked:
		if !q {
			t.Fatal("an idle connection with a read parked on it is not quiet")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("quiet waited for a read parked on the connection")
	}

	spoken, peer := pair()
	if _, err := peer.Write([]byte("N")); err != nil {
		t.Fatal(err)
	}
	if !until(quietNow(spoken), false) {
		t.Fatal("a connection with an unread byte is quiet")
	}
	buf := make([]byte, 1)
	spoken.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := spoken.Read(buf); n != 1 || buf[0] != 'N' {
		t.Fatalf("the byte quiet looked at was consumed: read %d %q, %v", n, buf[:n], err)
	}

	closed, peer := pair()
	peer.Close()
	if !until(quietNow(closed), false) {
		t.Fatal("a connection its peer closed is quiet")
	}

	if quiet(struct{ net.Conn }{idle}) {
		t.Fatal("a connection quiet cannot look into (wrapped) is quiet: it must be pinged")
	}
}

// parkRead reads from c until something arrives: a read parked on an idle
// connection, as pgconn's background reader leaves one.
func parkRead(c net.Conn) { c.Read(make([]byte, 1)) }

// goroutines is every goroutine's stack.
func goroutines() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
