//go:build linux || darwin || freebsd

package reference

import (
	"errors"
	"net"
	"syscall"
)

// quiet reports whether nothing waits on c's socket: no end of stream,
// no error and no unread byte. An idle pooled connection's peer says
// nothing until asked, so anything there (a FIN, a reset, PostgreSQL's
// termination notice) means the connection is no longer fit to lend. The
// look is a non-blocking MSG_PEEK, which leaves any byte where it is.
//
// It goes through Control, not Read: an idle pgx connection may have a
// read parked on it (pgconn's background reader, started when a write
// was slow, reads on until the next byte arrives), and RawConn.Read waits
// for that read to end, which on an idle connection is never. A replica
// under load hung its owner and its lease keeper on such a connection for
// 16 s (reference certification, seed 33554433).
func quiet(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false // a TLS or wrapped connection: ping as before
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	var peekErr error
	var buf [1]byte
	if err := raw.Control(func(fd uintptr) {
		n, _, peekErr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	}); err != nil {
		return false
	}
	return n < 0 && errors.Is(peekErr, syscall.EAGAIN)
}
