package runner

import (
	"fmt"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/scenarios"
)

// active is a fault an example injected and has not healed yet.
type active struct {
	f    faults.Fault
	heal faults.HealFunc
}

// stepFault is the fault a step injects or heals, built before the first
// step so that the gate can ask it how far it reaches (Scope) and whether
// it is momentary, instead of inferring either from the step's shape.
type stepFault struct {
	id   string       // the scenario's fault id ("kill:replica0" for a process step)
	f    faults.Fault // nil for a step that neither injects nor heals a fault
	heal bool         // the step heals f, injected by an earlier step under id
	err  error        // f could not be built: the step fails with it
}

// reaches says whether the step's fault reaches beyond its own payment.
func (sf stepFault) reaches() bool { return sf.f != nil && sf.f.Scope() != history.Payment }

// momentary says whether the step injects or heals a momentary fault.
func (sf stepFault) momentary() bool { return sf.f != nil && faults.IsMomentary(sf.f) }

// planFaults builds the fault of every step of p's scenario: a fault
// step's through package faults (aimed at the real order), a process
// step's as the replica fault it is (kill, pause, restart), and a heal,
// resume or restart of a killed replica as the fault it heals.
func (p *execution) planFaults() []stepFault {
	plan := make([]stepFault, len(p.sc.Steps))
	injected := map[string]faults.Fault{}
	inject := func(i int, id string, f faults.Fault) {
		plan[i] = stepFault{id: id, f: f}
		injected[id] = f
	}
	heal := func(i int, id string) {
		plan[i] = stepFault{id: id, f: injected[id], heal: true}
		delete(injected, id)
	}
	for i, s := range p.sc.Steps {
		switch {
		case s.Fault != nil:
			f, err := p.build(*s.Fault)
			if err != nil {
				plan[i] = stepFault{id: s.Fault.ID, err: err}
				continue
			}
			inject(i, s.Fault.ID, f)
		case s.Heal != "":
			heal(i, s.Heal)
		case s.Kill != nil:
			inject(i, processID("kill", *s.Kill), &faults.Kill{Replica: *s.Kill})
		case s.Pause != nil:
			inject(i, processID("pause", *s.Pause), &faults.Pause{Replica: *s.Pause})
		case s.Resume != nil:
			heal(i, processID("pause", *s.Resume))
		case s.Restart != nil:
			if _, killed := injected[processID("kill", *s.Restart)]; killed {
				heal(i, processID("kill", *s.Restart))
				continue
			}
			plan[i] = stepFault{id: processID("restart", *s.Restart), f: &faults.Restart{Replica: *s.Restart}}
		}
	}
	return plan
}

func processID(what string, replica int) string { return fmt.Sprintf("%s:replica%d", what, replica) }

// build builds a scenario fault through package faults, the one fault
// path: what is recorded is what was applied.
func (p *execution) build(f scenarios.Fault) (faults.Fault, error) {
	order := ""
	if f.Order != "" {
		order = p.realOrder(f.Order)
	}
	if needs := p.r.cfg.Target.Needs; len(needs) > 0 {
		f = f.On(needs[0])
	} else if f.NamesKeyStore() {
		return nil, fmt.Errorf("fault %s: it names the target's key store, and the target keeps none (needs: [])", f.ID)
	}
	fault, err := f.Spec(order).Build()
	if err != nil {
		return nil, fmt.Errorf("fault %s: %w", f.ID, err)
	}
	return fault, nil
}

// disruptive is the span of steps during which the plan disrupts the
// whole environment: from its first step to its last step that injects
// or heals a fault reaching beyond its own payment (a wave arms its holds
// before its kill, and a request held by the gateway must not be what
// another example waits for). ok is false for an example that disrupts
// nothing. A momentary fault (a clock or a session zone moved by
// relaunching a replica) and its heal are left out: they hold the gate
// for their own step only, not for the wait between them.
func disruptive(plan []stepFault) (last int, ok bool) {
	last = -1
	for i, sf := range plan {
		if sf.reaches() && !sf.momentary() {
			last = i
		}
	}
	return last, last >= 0
}
