package gatewaysim

import "context"

// Controller is what a harness needs to drive a gateway during a run:
// follow its events, wait for one, release holds, and add or remove
// faults. *Sim is one (in-process); a simulator running as a process or
// a container is driven through an adapter over Client. Keeping the
// harness on this interface is what lets one runner serve both modes.
type Controller interface {
	Subscribe() (<-chan Event, func())
	WaitEvent(ctx context.Context, pred func(Event) bool) (Event, error)
	Release(holdID string) error
	ReleaseAll()
	AddFault(f Fault) string
	RemoveFault(id string)
}

var _ Controller = (*Sim)(nil)
