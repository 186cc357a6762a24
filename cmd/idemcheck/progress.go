package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
)

// progress shows a live bar per family on a terminal, and one plain line
// per family elsewhere (CI=true, pipes, --json).
type progress struct {
	mu    sync.Mutex
	out   io.Writer
	quiet bool
	live  *mpb.Progress
	bars  map[string]*mpb.Bar
	stats map[string]certify.Progress
}

func newProgress(out io.Writer, quiet bool) *progress {
	p := &progress{out: out, quiet: quiet, bars: map[string]*mpb.Bar{}, stats: map[string]certify.Progress{}}
	if !quiet && isTerminal(out) && os.Getenv("CI") != "true" {
		p.live = mpb.New(mpb.WithOutput(out), mpb.WithWidth(30))
	}
	return p
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) update(u certify.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats[u.Family] = u
	switch {
	case p.quiet:
	case p.live != nil:
		p.bar(u)
	case u.Done:
		fmt.Fprintf(p.out, "%-22s %5d scenarios  %d violating  %s\n", u.Family, u.Examples, u.Violations, u.Elapsed.Round(100*time.Millisecond))
	}
}

// bar advances a family's bar by time spent against its budget.
func (p *progress) bar(u certify.Progress) {
	b, ok := p.bars[u.Family]
	if !ok {
		fam := u.Family
		b = p.live.AddBar(int64(u.Budget/time.Millisecond),
			mpb.PrependDecorators(decor.Name(fam, decor.WC{W: 23, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
				p.mu.Lock()
				s := p.stats[fam]
				p.mu.Unlock()
				left := max(s.Budget-s.Elapsed, 0).Round(time.Second)
				return fmt.Sprintf("%4d scenarios %2d violating %4s left", s.Examples, s.Violations, left)
			})))
		p.bars[u.Family] = b
	}
	b.SetCurrent(min(int64(u.Elapsed/time.Millisecond), int64(u.Budget/time.Millisecond)))
	if u.Done {
		b.SetTotal(-1, true)
	}
}

// checkpoint prints, where no live bars run, one line on a run's pace
// and memory with every checkpoint: a soak's log shows it going.
func (p *progress) checkpoint(r *reports.Report) {
	if p.quiet || p.live != nil {
		return
	}
	n := 0
	for _, f := range r.Families {
		n += f.Scenarios
	}
	elapsed := time.Duration(r.Duration)
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "progress: %s, %d examples (%.0f/s), peak memory %d MB, report rewritten\n",
		elapsed.Round(time.Second), n, float64(n)/max(elapsed.Seconds(), 1), certify.PeakRSS()>>20)
}

func (p *progress) close() {
	if p.live == nil {
		return
	}
	p.mu.Lock()
	for _, b := range p.bars {
		if !b.Completed() {
			b.Abort(false)
		}
	}
	p.mu.Unlock()
	p.live.Wait()
}
