// Package ledger holds the run's account of money. The Feed follows the
// gateway simulator's events from the start of the run and indexes them
// by order and by fault rule; a Barrier makes sure every charge committed
// before it is in the feed, so evidence is read only once the feed has
// caught up. The Ledger remembers which example sent each order and
// takes every charge of the feed once, in order: WatchLate offers a late
// charge as it happens (a new history for its example), and Reconcile
// holds every charge of the run against the examples (money nobody sent
// is Unattributed). Histories handed to it are never changed; with
// SetRetain it lets go of them, and the feed of their events, so that a
// soak's account stays flat but for its index of orders.
//
// It imports history, scenarios and gateway-sim; it never judges.
package ledger
