package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// pprofEnv names an address at which idemcheck serves Go's profiles
// (net/http/pprof) while it runs: where a long run's memory goes.
const pprofEnv = "IDEMCHECK_PPROF"

// servePprof serves /debug/pprof/ on $IDEMCHECK_PPROF (a loopback
// address such as 127.0.0.1:6060) for the life of the process; unset,
// nothing is served. An address that cannot be listened on is named on
// stderr and the run goes on without profiles.
func servePprof(stderr io.Writer) {
	addr := os.Getenv(pprofEnv)
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "idemcheck: %s=%s: %v (no profiles served)\n", pprofEnv, addr, err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go http.Serve(ln, mux)
}
