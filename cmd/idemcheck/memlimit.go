package main

import (
	"os"
	"runtime/debug"
)

// softMemoryLimit is the Go runtime's soft memory limit idemcheck runs
// under unless GOMEMLIMIT sets one. A run keeps what a late charge or
// the gateway may still need for a while (about two minutes of
// examples: their histories, the gateway's charges and events) and
// lets go of it after, so its live heap follows its pace, not its
// length: about 170 MB at 100 examples a second. Without a limit the
// collector lets the heap grow to twice the live one before it runs
// (GOGC=100), and a soak's resident memory came to 510 MiB at that pace;
// under the limit the collector runs earlier instead, so a long run
// stays under 512 MB on a CI runner (README, "Long runs").
const softMemoryLimit = 384 << 20

// limitMemory sets softMemoryLimit unless the GOMEMLIMIT environment
// variable set a limit of its own (the runtime has read it by now).
func limitMemory() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(softMemoryLimit)
	}
}
