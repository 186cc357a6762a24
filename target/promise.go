package target

import (
	"github.com/idemcheck/idemcheck/crashwave"
	"github.com/idemcheck/idemcheck/internal/yamlfile"
)

// CrashWindowFits says whether a crash wave can strike at least one of
// the target's crash points and still send every payment's final retry
// inside the promise, clear of its end's band (crashwave.Fit). A retry
// past the promise opens a new epoch, where a crash-induced second charge
// is outside every promise and proves nothing, so a target whose policy
// leaves no point room is refused for that family with what to change
// (crashwave.Refusal). A policy that leaves room for some points only is
// played: the wave strikes those, and CrashPointsLeftOut names the
// others (and says so when the recovery window does not fit before the
// final retries). Its error is a *yamlfile.FieldError on
// policy.recovery_window.
func (t *Target) CrashWindowFits() error {
	if msg := crashwave.Refusal(t.StoreNames(), t.Policy.WaveTerms()); msg != "" {
		return bad("policy.recovery_window", "%s", msg)
	}
	return nil
}

// CrashPointsLeftOut says what a crash wave cannot show under the
// target's policy and what would (crashwave.LeftOut): "" when the whole
// wave fits.
func (t *Target) CrashPointsLeftOut() string {
	return crashwave.LeftOut(t.StoreNames(), t.Policy.WaveTerms())
}

// Refuse places a validation error of t (a *yamlfile.FieldError such as
// CrashWindowFits returns) in t's file, as file:line: field: what to
// change, wrapping ErrInvalid so that the CLI exits 2. Checks that only
// matter for some families run once the families are chosen, after Load,
// which is why they are located here rather than by Parse.
func (t *Target) Refuse(err error) error {
	if err == nil {
		return nil
	}
	name := t.File
	if name == "" {
		name = "built-in target " + t.Name
	}
	return yamlfile.Locate(name, t.src, err, ErrInvalid)
}
