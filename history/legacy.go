package history

// ClassOf is f's class: f.Class as recorded, or, for a fault recorded
// without one (a document written before Fault.Class existed, or built by
// hand), the class its name had then (legacyClasses), Disturbs for a
// name not listed there.
func (f Fault) ClassOf() Class {
	if f.Class != "" {
		return f.Class
	}
	if c, ok := legacyClasses[f.Name]; ok {
		return c
	}
	return Disturbs
}

// legacyClasses is the one place that knows fault classes by name: the
// kinds of faults recorded before Fault.Class existed, with the class
// each was judged by then. It is frozen: a fault kind added later
// declares its class in package faults and records it, so it never needs
// a row here. A kind missing here was judged Disturbs.
var legacyClasses = map[string]Class{
	"kill": Crash, "kill_in_hang": Crash, "restart": Crash,
	"gateway:charge_then_fail": Crash, "gateway:charge_then_drop": Crash, "gateway:charge_then_hang": Crash,
	"latency": Slows, "bandwidth": Slows, "slicer": Slows, "gateway:slow": Slows,
	"decline": Business, "gateway:decline": Business,
}
