package scenarios

import (
	"pgregory.net/rapid"
)

// builder accumulates steps with small helpers, so generators read as
// timelines.
type builder struct{ steps []Step }

func (b *builder) add(s Step)     { b.steps = append(b.steps, s) }
func (b *builder) send(s Send)    { b.add(Step{Send: &s}) }
func (b *builder) wait(w Wait)    { b.add(Step{Wait: &w}) }
func (b *builder) fault(f Fault)  { b.add(Step{Fault: &f}) }
func (b *builder) heal(id string) { b.add(Step{Heal: id}) }
func (b *builder) waitAll()       { b.wait(Wait{Responses: []string{"*"}}) }
func (b *builder) scenario(fam string) Scenario {
	return Scenario{Name: fam, Family: fam, Steps: b.steps}
}

func drawAmount(t *rapid.T) int64 { return int64(rapid.IntRange(50, 99999).Draw(t, "amount")) }

// declineFault makes the gateway decline every charge for one order
// until healed: the decline is the first answer, and what retries,
// duplicates and reused keys of that payment must be given again. The
// generators heal it once the first answer is in, so that a server that
// forgot the decline (or never stored it) charges on a retry, and M4
// shows a decline on one try and a charge on another.
func declineFault(order string) Fault {
	return Fault{ID: "decline_" + order, Kind: "gateway:decline", Order: order}
}

// drawDecline says whether a payment's first answer is a decline: one in
// four, so that the families' other subjects keep most examples, and
// shrinking moves toward a charge.
func drawDecline(t *rapid.T) bool {
	return rapid.SampledFrom([]string{"charge", "charge", "charge", "decline"}).Draw(t, "first_answer") == "decline"
}

func tenantOf(steps []Step, order string) int {
	for _, s := range steps {
		if s.Send != nil && s.Send.Order == order {
			return s.Send.Tenant
		}
	}
	return 0
}

func amountOf(steps []Step, order string) int64 {
	for _, s := range steps {
		if s.Send != nil && s.Send.Order == order {
			return s.Send.Amount
		}
	}
	return 1250
}
