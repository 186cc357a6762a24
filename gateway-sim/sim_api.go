package gatewaysim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// The control API lives under /_sim/ on its own handler (ControlHandler),
// never behind the base URL a service is given for its provider: a server
// under test must not be able to read or reset the oracle, or clear the
// faults the harness armed.
func (s *Sim) simRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_sim/health", s.simHealth)
	mux.HandleFunc("GET /_sim/ledger", s.simLedger)
	mux.HandleFunc("POST /_sim/reset", s.simReset)
	mux.HandleFunc("GET /_sim/faults", s.simFaults)
	mux.HandleFunc("POST /_sim/faults", s.simAddFault)
	mux.HandleFunc("DELETE /_sim/faults", s.simClearFaults)
	mux.HandleFunc("DELETE /_sim/faults/{id}", s.simRemoveFault)
	mux.HandleFunc("POST /_sim/release", s.simRelease)
	mux.HandleFunc("GET /_sim/holds", s.simHolds)
	mux.HandleFunc("GET /_sim/events", s.simEvents)
	mux.HandleFunc("GET /_sim/seq", s.simSeq)
	mux.HandleFunc("GET /_sim/trace", s.simTrace)
	mux.HandleFunc("PUT /_sim/trace", s.simSetTrace)
	mux.HandleFunc("POST /_sim/expect", s.simExpect)
	mux.HandleFunc("POST /_sim/keep-keys", s.simKeepKeys)
	mux.HandleFunc("POST /_sim/forget", s.simForget)
	mux.HandleFunc("/_sim/", s.simUnknown)
}

// simError is the control API's error object; Code lets Client map it back
// to a sentinel.
type simError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// simErrorCodes maps sentinels to codes and statuses, where they meet HTTP.
var simErrorCodes = []struct {
	err    error
	code   string
	status int
}{
	{ErrUnknownHold, "unknown_hold", http.StatusNotFound},
	{ErrUnknownFault, "unknown_fault", http.StatusNotFound},
	{ErrInvalidFault, "invalid_fault", http.StatusBadRequest},
	{ErrInvalidTrace, "invalid_trace", http.StatusBadRequest},
	{ErrInvalidKeepKeys, "invalid_keep_keys", http.StatusBadRequest},
	{ErrInvalidForget, "invalid_forget", http.StatusBadRequest},
	{ErrClosed, "closed", http.StatusServiceUnavailable},
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeSimError(w http.ResponseWriter, err error) {
	for _, c := range simErrorCodes {
		if errors.Is(err, c.err) {
			writeJSON(w, c.status, map[string]simError{"error": {c.code, err.Error()}})
			return
		}
	}
	writeJSON(w, http.StatusBadRequest, map[string]simError{"error": {"bad_request", err.Error()}})
}

func (s *Sim) simHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// ledgerJSON is the body of GET /_sim/ledger.
type ledgerJSON struct {
	Charges []Charge `json:"charges"`
}

func (s *Sim) simLedger(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, ledgerJSON{Charges: s.Ledger()})
}

func (s *Sim) simReset(w http.ResponseWriter, _ *http.Request) {
	s.Reset()
	w.WriteHeader(http.StatusNoContent)
}

type faultsJSON struct {
	Faults []FaultStatus `json:"faults"`
}

func (s *Sim) simFaults(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, faultsJSON{Faults: s.Faults()})
}

// simAddFault takes a Fault in its JSON form and refuses unknown fields: a
// misspelt "order_id" would otherwise silently match every order.
func (s *Sim) simAddFault(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFault(http.MaxBytesReader(w, r.Body, maxBody))
	if err == nil {
		err = f.Validate()
	}
	if err != nil {
		writeSimError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": s.AddFault(f)})
}

func decodeFault(body io.Reader) (Fault, error) {
	raw, err := io.ReadAll(body)
	if err != nil {
		return Fault{}, errors.Join(ErrInvalidFault, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var wire faultJSON
	if err := dec.Decode(&wire); err != nil {
		return Fault{}, errors.Join(ErrInvalidFault, err)
	}
	return wire.fault()
}

func (s *Sim) simClearFaults(w http.ResponseWriter, _ *http.Request) {
	s.ClearFaults()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sim) simRemoveFault(w http.ResponseWriter, r *http.Request) {
	if err := s.removeFault(r.PathValue("id")); err != nil {
		writeSimError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// simRelease is POST /_sim/release?hold=ID; without hold it releases all.
func (s *Sim) simRelease(w http.ResponseWriter, r *http.Request) {
	if err := s.Release(r.URL.Query().Get("hold")); err != nil {
		writeSimError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type holdsJSON struct {
	Holds []Hold `json:"holds"`
}

func (s *Sim) simHolds(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, holdsJSON{Holds: s.Holds()})
}

func (s *Sim) simUnknown(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, map[string]simError{"error": {"not_found", "no control endpoint " + r.Method + " " + r.URL.Path}})
}

// seqJSON is the body of GET /_sim/seq: the Seq of the latest event, the
// target of a consumer's barrier.
type seqJSON struct {
	Seq int64 `json:"seq"`
}

func (s *Sim) simSeq(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, seqJSON{Seq: s.LastSeq()})
}

func (s *Sim) simTrace(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Trace())
}

// simSetTrace is PUT /_sim/trace with a Trace as its JSON body.
func (s *Sim) simSetTrace(w http.ResponseWriter, r *http.Request) {
	simApply(w, r, ErrInvalidTrace, s.SetTrace)
}

// simExpect is POST /_sim/expect with an Expectation as its JSON body.
func (s *Sim) simExpect(w http.ResponseWriter, r *http.Request) {
	simApply(w, r, ErrInvalidTrace, s.Expect)
}

// simApply decodes the body into a T, applies it and answers 204; an
// unreadable body is invalid (400 with invalid's code), a refused value
// answers as its error says.
func simApply[T any](w http.ResponseWriter, r *http.Request, invalid error, apply func(T) error) {
	var v T
	if err := decodeStrict(http.MaxBytesReader(w, r.Body, maxBody), &v); err != nil {
		writeSimError(w, fmt.Errorf("%w: %v", invalid, err))
		return
	}
	if err := apply(v); err != nil {
		writeSimError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// decodeStrict decodes one JSON value into v, refusing unknown fields.
func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
