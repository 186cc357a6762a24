package process

import (
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// Close tears the environment down in dependency order: replicas first
// (SIGTERM, SIGKILL after the stop timeout, all in parallel), then the
// gateway (held responses released, last ledger events copied into the
// history), toxiproxy, the stores, and finally the work directory unless it
// is kept or the caller's. It is idempotent and safe to call concurrently;
// later calls wait for the first and return its error. Worst case it takes
// the stop timeout plus pgcluster's 10 s shutdown bound.
func (e *Env) Close() error {
	e.closeOnce.Do(func() {
		e.closed.Store(true)
		start := time.Now()
		e.closeErr = errors.Join(e.stopReplicas(), e.closeGateway(), e.closeProxies(), e.closeStores(), e.removeWorkDir())
		e.log.Info("environment closed", "took", time.Since(start), "err", e.closeErr)
	})
	return e.closeErr
}

func (e *Env) stopReplicas() error {
	errs := make([]error, len(e.replicas))
	var wg sync.WaitGroup
	for i, r := range e.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.stop()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (e *Env) closeGateway() error {
	if e.gw == nil {
		return nil
	}
	return e.gw.close()
}

func (e *Env) closeProxies() error {
	if e.proxies == nil {
		return nil
	}
	return e.proxies.close()
}

func (e *Env) removeWorkDir() error {
	if !e.ownDir || e.keep {
		if e.keep {
			e.log.Info("work dir kept", "dir", e.workDir)
		}
		return nil
	}
	return os.RemoveAll(e.workDir)
}

// Resources is an inventory of what an Env holds that Close must release:
// process ids (replicas and a throwaway PostgreSQL's postmaster), loopback
// TCP ports and directories. It exists so tests (and a paranoid CLI) can
// prove that nothing was left behind.
type Resources struct {
	PIDs  []int
	Ports []int
	Dirs  []string
}

// Resources lists what the Env currently holds. Call it before Close and
// check the result after.
func (e *Env) Resources() Resources {
	var res Resources
	for i, r := range e.replicas {
		if pid := r.pid(); pid != 0 {
			res.PIDs = append(res.PIDs, pid)
		}
		res.Ports = appendPort(res.Ports, r.addr)
		res.Ports = appendPort(res.Ports, e.clients[i])
	}
	if px := e.proxies; px != nil {
		for _, addr := range px.addrs {
			res.Ports = appendPort(res.Ports, addr)
		}
	}
	if e.gw != nil {
		res.Ports = appendPort(res.Ports, e.gw.addr)
	}
	for _, s := range e.stores {
		h := s.held()
		res.PIDs, res.Ports, res.Dirs = append(res.PIDs, h.PIDs...), append(res.Ports, h.Ports...), append(res.Dirs, h.Dirs...)
	}
	if e.ownDir && !e.keep {
		res.Dirs = append(res.Dirs, e.workDir)
	}
	return res
}

func appendPort(ports []int, addr string) []int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return ports
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return ports
	}
	for _, q := range ports {
		if q == n {
			return ports
		}
	}
	return append(ports, n)
}
