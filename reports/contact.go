package reports

import (
	"fmt"
	"io"
	"strings"
)

// Contact is first contact's checklist: a handful of requests sent before
// the families start (and alone by `idemcheck doctor`), and what the
// gateway's ledger showed of them. It says how money is traced in the
// run, and stops a run that could only judge a misconfiguration.
type Contact struct {
	// Trace is where the server names the order on its gateway calls
	// (gatewaysim.Trace's written form), as declared or as found.
	Trace string `json:"trace,omitempty"`
	// TraceFound says first contact found Trace (the target declared none).
	TraceFound bool `json:"trace_found,omitempty"`
	// API is the provider API the server's charge went through.
	API   string        `json:"api,omitempty"`
	Took  Duration      `json:"took"`
	Items []ContactItem `json:"items"`
}

// ContactItem is one line of the checklist.
type ContactItem struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
	// Fix is the target-file lines (or the change to the server) that
	// fix a failed item.
	Fix []string `json:"fix,omitempty"`
	// Blocks says that certify cannot run past this failed item: every
	// check would judge the misconfiguration, not the server.
	Blocks bool `json:"blocks,omitempty"`
}

// Blocked reports whether a failed item stops certification.
func (c *Contact) Blocked() bool {
	_, blocked := c.Blocking()
	return blocked
}

// Blocking is the first failed item that stops certification.
func (c *Contact) Blocking() (ContactItem, bool) {
	for _, it := range c.Items {
		if !it.OK && it.Blocks {
			return it, true
		}
	}
	return ContactItem{}, false
}

// WriteText writes the checklist for a person: one line per item, ✓ or
// ✗, each ✗ followed by the lines that fix it.
func (c *Contact) WriteText(w io.Writer) {
	for _, it := range c.Items {
		mark := "✓"
		if !it.OK {
			mark = "✗"
		}
		line := mark + " " + it.Check
		if it.Detail != "" {
			line += ": " + it.Detail
		}
		fmt.Fprintln(w, line)
		for _, f := range it.Fix {
			fmt.Fprintln(w, "    "+strings.ReplaceAll(f, "\n", "\n    "))
		}
	}
}
