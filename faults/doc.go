// Package faults breaks an idemcheck environment on purpose, the way
// payment systems break in production, and records every break and repair
// in the run's history. Like toxiproxy's toxics/, each fault is one small
// file implementing one small interface.
//
// # The interface
//
//   - Fault: Name, Class, Scope, Target, Inject, Heal. A Fault value is
//     one injection. Class is what it can do to a payment (history.Crash,
//     Slows, Business, Disturbs, Skews): the kind declares it, Apply
//     records it in history.Fault.Class, and the checker judges by it,
//     never by the kind's name. Scope is how far it reaches
//     (history.Payment, Replica, Environment): Apply records it in
//     history.Fault.Scope, and the runner's gate, its sharing with the
//     other examples in flight and its cleanup order read it.
//   - Parametrized, Ordered, Armed, Skewed: optional abilities, checked
//     by type assertion, that add Params, Order (what the fault is aimed
//     at, not how far it reaches), the gateway rule (ParamRule) and Skew
//     to the recorded history.Fault.
//   - Momentary: an optional ability of a fault whose disruption is its
//     injection and its heal alone (clock_skew, db_timezone relaunch a
//     replica); IsMomentary asks it.
//   - Env: what faults need from an environment; *harness.Env satisfies it.
//   - Apply(ctx, env, f) (HealFunc, error): inject and record; the HealFunc
//     heals and records. Always go through Apply: it is what puts the
//     fault in the history. Both ends are stamped once the action has
//     completed (a kill once the process is reaped, a heal once the
//     restarted replica is ready).
//
// # Network faults (toxiproxy, on any harness.Link, per direction)
//
//   - Latency, Timeout, ResetPeer, Slicer, LimitData, Bandwidth: one
//     toxic each; Direction is harness.Upstream (the requests),
//     harness.Downstream (the responses, the default) or Both.
//   - Down: the link is switched off (connections cut, dials refused).
//
// # Process faults (a replica's whole process group)
//
//   - Kill: SIGKILL; Heal restarts on the same address.
//   - Pause: SIGSTOP; Heal sends SIGCONT.
//   - Restart: graceful stop and start, complete when Inject returns.
//   - ClockSkew: relaunch with the clock moved (FAKETIME, libfaketime),
//     the offset measured from the replica's Date header and recorded as
//     history.Fault.Skew (Skewed); Heal relaunches on the true clock.
//   - DBTimeZone: relaunch with the database sessions in another zone
//     (through the store URLs); Heal relaunches on the target's URLs.
//
// # Gateway faults (rules on the gateway simulator)
//
//   - Gateway, built by Decline, FailBeforeCharge, ChargeThenFail,
//     ChargeThenDrop, ChargeThenHang and Slow, one file each
//     (gateway_<kind>.go) registering the kind, the simulator rule it
//     arms and its class (registerGateway); matched by order, n-th
//     request or probability. Heal removes the rule and releases its holds.
//     The history records the rule's lifetime, and its Fired time once the
//     run's ledger feed has seen the simulator's event for it firing
//     (runner/record.go, stampFirings): a rule armed but never fired
//     proves nothing (L4 counts crash points seen to fire).
//   - KillInHang(ctx, env, replica, order): SIGKILL a replica while the
//     gateway holds that order's committed charge, then release the hold.
//     CrashInHang is the same as a declarative fault for scenario files.
//
// # Adding a fault kind
//
// One new file in this package, whatever its class: a type implementing
// Fault, Class and Scope included (and Parametrized when it has parameters, so the
// history records what was applied), and an init that registers its kind
// with the target it takes ("link", "replica" or "gateway"), the
// parameters it accepts and how a checked Spec builds it; down.go and
// latency.go are the smallest examples. A gateway kind is smaller still:
// an init calling registerGateway with the simulator rule it arms and its
// class (gateway_decline.go), once the simulator has the rule. Nothing
// else changes: the checker reads the class from the history, scenario
// and incident files and Kinds pick the kind up from the registry, and a
// parameter it does not accept is refused, with file:line and the field,
// when the file loads.
//
// # Faults as data
//
//   - Spec {Kind, Target, Direction, Params}, its one-line form
//     "latency:replica0->gateway:downstream:latency=200ms", ParseSpec,
//     Spec.Build, Parse (both at once) and Kinds. Errors are *SpecError,
//     naming the field, and wrap ErrBadSpec.
//
// # Errors
//
//   - ErrBadSpec, ErrNotInjected; errors from Apply read
//     "inject <name> on <target>: ..." and wrap the harness's sentinels
//     (harness.ErrNotRunning, harness.ErrUnknownLink, ...).
package faults
