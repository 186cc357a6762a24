// Package crashwave is the crash-window family's model of a wave: the
// table of crash points and how long a wave takes under a target's
// policy. It imports nothing of idemcheck, so every package that reads
// it (the history, the checker, the target's validation, the
// generators) may.
//
// # The table
//
//   - Point: one crash point: its name in a history, the fault kind that
//     strikes it, how the family plays the strike (its Choreography), how
//     long a strike takes (Cost), whether it restarts a replica or a
//     store, and the store it needs.
//   - Choreography: the ways a strike is played around a payment's first
//     request (a gateway rule, a link fault, a kill or pause or store
//     restart while the gateway holds the charge, a kill after the
//     answer).
//   - Table: every crash point, the one table of them. For: the rows of
//     a target with these stores. Names, Named: the points by name.
//   - StoreTarget: whether a fault's target is one of the stores the
//     table's rows strike.
//
// # The timing model
//
//   - Terms: what the model reads of a policy (history.Policy.WaveTerms).
//   - MaxStrikes: the most payments struck at one point.
//   - Margin, RetryBy, Room: when a wave's final retries go at the latest,
//     and how long its strikes may take before the recovery window.
//   - Wave, Fit: the points a wave under a policy strikes, and whether
//     the recovery window fits before its final retries. RoomFor: the
//     policy values that would make a strike fit.
//   - Refusal, LeftOut: in words, why no wave fits a policy (the target
//     refuses the family) and what a wave that fits leaves out (the
//     family's caveat), each with the policy value that would change it.
//   - PlannedStrikes, Wave.Planned: how long a wave is budgeted when a
//     certification plans the family's time.
package crashwave
