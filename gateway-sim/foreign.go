package gatewaysim

import (
	"net/http"
	"strings"
)

// EventForeign is a request that is not the provider's API, received on
// the provider's address: answered with the provider's 404 and recorded
// with its Method, Path and Via (the path it came by). A request there
// for a control API (IsHarnessPath) is a server reaching for the oracle.
const EventForeign = "foreign"

// HandlerVia is Handler for the requests that come by one path, named via
// (a replica's gateway link, "replica0->gateway"): every request that is
// not the provider's API is answered as Handler answers it, the
// provider's 404, and recorded as an EventForeign event naming via, so
// the harness can tell which replica sent it.
func (s *Sim) HandlerVia(via string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := s.mux.Handler(r); pattern == "" || pattern == "/" {
			s.emit(Event{Type: EventForeign, Method: r.Method, Path: r.URL.Path, Via: via})
		}
		s.mux.ServeHTTP(w, r)
	})
}

// harnessPaths are the paths of the harness's control APIs: the
// simulator's own (/_sim/...) and toxiproxy's (/proxies, /reset,
// /populate, /version).
var harnessPaths = []string{"/_sim/", "/_sim", "/proxies", "/reset", "/populate", "/version"}

// IsHarnessPath reports whether path belongs to one of the harness's
// control APIs: a request for it on the provider's address is an attempt
// to reach the oracle, whatever it was answered.
func IsHarnessPath(path string) bool {
	for _, p := range harnessPaths {
		if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}
