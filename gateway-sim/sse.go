package gatewaysim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ssePing keeps idle event streams alive through proxies.
const ssePing = 15 * time.Second

// maxPollWait bounds a long-poll, so a forgotten client cannot pin a handler.
const maxPollWait = 60 * time.Second

// simEvents is GET /_sim/events. By default it is a Server-Sent Events
// stream (one JSON Event per "data:" line, its Seq as the SSE id);
// ?since=SEQ or Last-Event-ID resumes after SEQ, and since=0 (the default)
// starts with everything since the last Reset. With ?wait=DURATION it is a
// long-poll instead: it answers {"events":[...]} as soon as at least one
// event after since exists, or empty when the wait runs out.
func (s *Sim) simEvents(w http.ResponseWriter, r *http.Request) {
	since, err := sinceOf(r)
	if err != nil {
		writeSimError(w, err)
		return
	}
	if wait := r.URL.Query().Get("wait"); wait != "" {
		s.longPoll(w, r, since, wait)
		return
	}
	s.stream(w, r, since)
}

func sinceOf(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("since")
	if v == "" {
		v = r.Header.Get("Last-Event-ID")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("since: want a sequence number, got %q", v)
	}
	return n, nil
}

func (s *Sim) stream(w http.ResponseWriter, r *http.Request, since int64) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, cancel := s.SubscribeSince(since)
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	s.pumpSSE(w, flusher, r, ch)
}

func (s *Sim) pumpSSE(w http.ResponseWriter, flusher http.Flusher, r *http.Request, ch <-chan Event) {
	ping := time.NewTicker(ssePing)
	defer ping.Stop()
	for {
		var err error
		select {
		case ev, ok := <-ch:
			if !ok {
				return
			}
			err = writeSSE(w, ev)
		case <-ping.C:
			_, err = fmt.Fprint(w, ": ping\n\n")
		case <-r.Context().Done():
			return
		}
		if err != nil {
			return
		}
		flusher.Flush()
	}
}

func writeSSE(w http.ResponseWriter, ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\ndata: %s\n\n", ev.Seq, b)
	return err
}

// eventsJSON is the long-poll answer; Next is the since for the next poll.
type eventsJSON struct {
	Events []Event `json:"events"`
	Next   int64   `json:"next"`
}

func (s *Sim) longPoll(w http.ResponseWriter, r *http.Request, since int64, wait string) {
	d, err := time.ParseDuration(wait)
	if err != nil || d < 0 {
		writeSimError(w, fmt.Errorf("wait: want a Go duration like 5s, got %q", wait))
		return
	}
	ch, cancel := s.SubscribeSince(since)
	defer cancel()
	timer := time.NewTimer(min(d, maxPollWait))
	defer timer.Stop()
	out := eventsJSON{Events: []Event{}, Next: since}
	select {
	case ev, ok := <-ch:
		if ok {
			out.Events = append(out.Events, ev)
			out.Events = drain(ch, out.Events)
		}
	case <-timer.C:
	case <-r.Context().Done():
		return
	}
	if n := len(out.Events); n > 0 {
		out.Next = out.Events[n-1].Seq
	}
	writeJSON(w, http.StatusOK, out)
}

// drain appends the events already waiting on ch without blocking.
func drain(ch <-chan Event, evs []Event) []Event {
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		default:
			return evs
		}
	}
}
