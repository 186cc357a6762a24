// Package faults breaks an idemcheck environment on purpose, the way
// payment systems break in production, and records every break and repair
// in the run's history. Like toxiproxy's toxics/, each fault is one small
// file implementing one small interface.
//
// # The interface
//
//   - Fault: Name, Target, Inject, Heal. A Fault value is one injection.
//   - Parametrized, Ordered: optional abilities, checked by type
//     assertion, that add Params and Order to the recorded history.Fault.
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
//
// # Gateway faults (rules on the gateway simulator)
//
//   - Gateway, built by Decline, FailBeforeCharge, ChargeThenFail,
//     ChargeThenDrop, ChargeThenHang and Slow; matched by order, n-th
//     request or probability. Heal removes the rule and releases its holds.
//     The history records the rule's lifetime; its firings show in the
//     ledger and the simulator's events (the harness forwards only ledger
//     events into the history).
//   - KillInHang(ctx, env, replica, order): SIGKILL a replica while the
//     gateway holds that order's committed charge, then release the hold.
//     CrashInHang is the same as a declarative fault for scenario files.
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
