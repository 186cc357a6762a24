package gatewaysim

import "net/http"

// routes wires the provider's API (its dialect's routes): the data
// plane, the one address a server under test is given. Any other path,
// /_sim/... included, gets the provider's own 404.
func (s *Sim) routes() *http.ServeMux {
	mux := http.NewServeMux()
	s.dialect.routes(s, mux)
	return mux
}

// controlRoutes wires the control API (/_sim/...): the control plane,
// served on a listener of its own that no server under test is told of.
func (s *Sim) controlRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	s.simRoutes(mux)
	return mux
}

// write sends a response with the provider's headers (its dialect's: the
// key echoed, a replay marked); a is nil for a request that is no attempt
// (a GET, a search).
func (s *Sim) write(w http.ResponseWriter, a *attempt, resp *response) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	key := ""
	if a != nil {
		key = a.key
	}
	s.dialect.headers(s, h, key, resp)
	for k, v := range resp.header {
		h.Set(k, v)
	}
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
}
