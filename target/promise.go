package target

import (
	"fmt"

	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/internal/yamlfile"
)

// CrashWindowFits says whether a crash-window example's final retry (the
// strikes of the longest wave, history.LongestWave, then the recovery
// window) lands inside the promise, clear of its end's band. A retry past
// the promise opens a new epoch, where a crash-induced second charge is
// outside every promise and proves nothing, so a target that cannot fit
// is refused for that family with what to change. Its error is a *yamlfile.FieldError on
// policy.recovery_window.
func (t *Target) CrashWindowFits() error {
	p := t.Policy
	strikes := history.LongestWave(t.StoreNames())
	need := strikes + p.RecoveryWindow + p.Band()
	if need <= p.Promise() {
		return nil
	}
	msg := fmt.Sprintf("a crash-window retry after the strike (up to %s) and the recovery window (%s) lands %s after the first request, past the promise max(ttl, retry_window) = %s less its %s boundary band: set policy.retry_window to at least %s",
		strikes, p.RecoveryWindow, strikes+p.RecoveryWindow, p.Promise(), p.Band(), need)
	if room := p.Promise() - strikes - p.Band(); room > 0 {
		msg += fmt.Sprintf(", or shorten policy.recovery_window to at most %s", room)
	}
	return bad("policy.recovery_window", "%s", msg)
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
