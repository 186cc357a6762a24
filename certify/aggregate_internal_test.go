package certify

import (
	"testing"

	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/search"
)

// TestAggregate_UnstruckNoteCountsEachPaymentOnce: the family's note
// names, per crash point, the payments whose strike did not happen and
// why; an example judged again (a late charge) counts once, and a family
// whose strikes all happened says nothing.
func TestAggregate_UnstruckNoteCountsEachPaymentOnce(t *testing.T) {
	var a aggregate
	if note := a.unstruckNote(); note != "" {
		t.Errorf("note %q with every strike made", note)
	}
	answered := "its first request was answered (status 409) before the gateway held a charge for it"
	wave := &history.History{Unstruck: []history.Unstruck{
		{Point: "kill-in-hang", Payment: "ord_a_o1", Why: answered},
		{Point: "pause-in-hang", Payment: "ord_a_o2", Why: answered},
	}}
	a.add(search.Example{History: wave})
	a.add(search.Example{History: wave}) // judged again
	a.add(search.Example{History: &history.History{Unstruck: []history.Unstruck{{Point: "kill-in-hang", Payment: "ord_b_o0", Why: "past its room"}}}})
	want := "payments whose strike did not happen, judged without it: kill-in-hang, 2 (" + answered + "); pause-in-hang, 1 (" + answered + ")"
	if note := a.unstruckNote(); note != want {
		t.Errorf("note\n%q, want\n%q", note, want)
	}
}
