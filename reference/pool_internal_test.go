//go:build linux || darwin || freebsd

package reference

import (
	"net"
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
	until := func(c net.Conn, want bool) bool {
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			if quiet(c) == want {
				return true
			}
		}
		return false
	}

	idle, _ := pair()
	if !quiet(idle) {
		t.Fatal("an idle connection is not quiet")
	}

	spoken, peer := pair()
	if _, err := peer.Write([]byte("N")); err != nil {
		t.Fatal(err)
	}
	if !until(spoken, false) {
		t.Fatal("a connection with an unread byte is quiet")
	}
	buf := make([]byte, 1)
	spoken.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := spoken.Read(buf); n != 1 || buf[0] != 'N' {
		t.Fatalf("the byte quiet looked at was consumed: read %d %q, %v", n, buf[:n], err)
	}

	closed, peer := pair()
	peer.Close()
	if !until(closed, false) {
		t.Fatal("a connection its peer closed is quiet")
	}

	if quiet(struct{ net.Conn }{idle}) {
		t.Fatal("a connection quiet cannot look into (wrapped) is quiet: it must be pinged")
	}
}
