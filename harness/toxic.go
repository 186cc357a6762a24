package harness

// Toxic is one toxiproxy toxic to put on a link. Type is a toxiproxy toxic
// type (latency, timeout, reset_peer, slicer, limit_data, bandwidth,
// slow_close) and Attributes its attributes in toxiproxy's own units
// (milliseconds, KB/s, bytes): package faults converts from time.Duration.
// Name must be unique on the link; it is how RemoveToxic finds the toxic.
type Toxic struct {
	Name       string
	Type       string
	Direction  Direction
	Attributes map[string]any
	// Toxicity is the probability that a connection is affected, drawn
	// once per connection when it is opened or the toxic is added; 0 means
	// 1 (always), because toxiproxy takes a literal 0 as "never".
	Toxicity float32
}
