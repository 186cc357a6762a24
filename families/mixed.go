package families

import (
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// longExample is the longest single example mixed will draw: a target
// whose TTL or recovery window is longer is certified for those levels by
// the dedicated families, with a budget that fits.
const longExample = 30 * time.Second

func init() {
	register(Family{Name: "mixed", Level: "L5", Rank: 100, Gen: genMixed, Composite: true, Crashes: true, Solo: soloMixed,
		Doc: "all families at once: the nightly soak"})
}

func genMixed(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var fams []Family
	for _, f := range Families {
		if !f.Composite && f.ExampleTime(tg) <= longExample && (f.Fits == nil || f.Fits(tg) == nil) {
			fams = append(fams, f)
		}
	}
	fam := rapid.SampledFrom(fams).Draw(t, "family")
	sc := fam.Gen(t, tg, replicas)
	sc.Family = "mixed"
	sc.Name = mixedPrefix + fam.Name
	return sc
}

// mixedPrefix begins the name of every scenario mixed draws, before the
// name of the family it was drawn from.
const mixedPrefix = "mixed/"

// soloMixed re-builds a scenario with fewer payments through the Solo of
// the family it was drawn from, if that family has one.
func soloMixed(sc scenarios.Scenario, orders []string) (scenarios.Scenario, bool) {
	name, ok := strings.CutPrefix(sc.Name, mixedPrefix)
	if !ok {
		return scenarios.Scenario{}, false
	}
	fam, err := FamilyByName(name)
	if err != nil || fam.Solo == nil {
		return scenarios.Scenario{}, false
	}
	return fam.Solo(sc, orders)
}
