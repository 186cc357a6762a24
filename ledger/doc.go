// Package ledger holds the run's account of money. The Feed follows the
// gateway simulator's events from the start of the run and indexes them
// by order and by fault rule; a Barrier makes sure every charge committed
// before it is in the feed, so evidence is read only once the feed has
// caught up. The Ledger remembers which example sent each order:
// Reconcile holds the gateway's whole ledger against them (a late charge
// makes a new history for its example; money nobody sent is
// Unattributed), and WatchLate offers a late charge as it happens.
// Histories handed to it are never changed.
//
// It imports history, scenarios and gateway-sim; it never judges.
package ledger
