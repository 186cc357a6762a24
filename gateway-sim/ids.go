package gatewaysim

import (
	"math/rand/v2"
	"strconv"
)

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Independent random streams drawn from Config.Seed: fault draws must not
// shift when the number of charges changes, and the reverse.
const (
	streamIDs    = 0x1d5
	streamFaults = 0xfa17
)

func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// randomID returns prefix followed by n base-62 characters, like Stripe's
// "ch_3Mz..." ids. Callers hold Sim.mu, which serialises the stream.
func randomID(r *rand.Rand, prefix string, n int) string {
	b := make([]byte, len(prefix), len(prefix)+n)
	copy(b, prefix)
	for range n {
		b = append(b, idAlphabet[r.IntN(len(idAlphabet))])
	}
	return string(b)
}

// serialID returns prefix followed by a decimal counter: fault and hold ids
// are typed by humans into curl, so they are short.
func serialID(prefix string, n int64) string {
	return prefix + strconv.FormatInt(n, 10)
}
