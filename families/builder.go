package families

import (
	"github.com/idemcheck/idemcheck/scenarios"
	"pgregory.net/rapid"
)

// builder accumulates steps with small helpers, so generators read as
// timelines.
type builder struct{ steps []scenarios.Step }

func (b *builder) add(s scenarios.Step)    { b.steps = append(b.steps, s) }
func (b *builder) send(s scenarios.Send)   { b.add(scenarios.Step{Send: &s}) }
func (b *builder) wait(w scenarios.Wait)   { b.add(scenarios.Step{Wait: &w}) }
func (b *builder) fault(f scenarios.Fault) { b.add(scenarios.Step{Fault: &f}) }
func (b *builder) heal(id string)          { b.add(scenarios.Step{Heal: id}) }
func (b *builder) waitAll()                { b.wait(scenarios.Wait{Responses: []string{"*"}}) }
func (b *builder) scenario(fam string) scenarios.Scenario {
	return scenarios.Scenario{Name: fam, Family: fam, Steps: b.steps}
}

func drawAmount(t *rapid.T) int64 { return int64(rapid.IntRange(50, 99999).Draw(t, "amount")) }

// declineFault makes the gateway decline every charge for one order
// until healed: the decline is the first answer, and what retries,
// duplicates and reused keys of that payment must be given again. The
// generators heal it once the first answer is in, so that a server that
// forgot the decline (or never stored it) charges on a retry, and M4
// shows a decline on one try and a charge on another.
func declineFault(order string) scenarios.Fault {
	return scenarios.Fault{ID: "decline_" + order, Kind: "gateway:decline", Order: order}
}

// drawDecline says whether a payment's first answer is a decline: one in
// four, so that the families' other subjects keep most examples, and
// shrinking moves toward a charge.
func drawDecline(t *rapid.T) bool {
	return rapid.SampledFrom([]string{"charge", "charge", "charge", "decline"}).Draw(t, "first_answer") == "decline"
}

func tenantOf(steps []scenarios.Step, order string) int {
	for _, s := range steps {
		if s.Send != nil && s.Send.Order == order {
			return s.Send.Tenant
		}
	}
	return 0
}

func amountOf(steps []scenarios.Step, order string) int64 {
	for _, s := range steps {
		if s.Send != nil && s.Send.Order == order {
			return s.Send.Amount
		}
	}
	return 1250
}
