// Package search turns a family into a rapid property over one runner:
// draw, run, judge (Property). Explore plays a family's seeds several at
// a time until the deadline or a failure, and re-plays a failing seed
// alone through rapid, which confirms and shrinks it; Property.Solo
// re-plays a failure's payments alone (a crash wave's), through the
// family's Solo hook (families.Family.Solo), and certify asks it to.
//
// It imports families, runner and checker: it is where a history is
// first judged.
package search
