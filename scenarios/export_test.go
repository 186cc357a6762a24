package scenarios

// Loaded is sc as its fields say, without the file it was loaded from, so
// that a test can compare a scenario with the one its written form loads.
func Loaded(sc *Scenario) Scenario {
	c := *sc
	c.origin = nil
	return c
}
