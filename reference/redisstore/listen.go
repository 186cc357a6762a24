package redisstore

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// idleCheck is how long the subscription may stay silent before a ping
// proves it alive: a silently dead connection (a partition) is noticed
// within seconds instead of never.
const idleCheck = 5 * time.Second

// Listen is the store's reference.Notifier: SUBSCRIBE to Channel on a
// connection of its own, until it fails or ctx ends. It reports a failure
// instead of letting the client resubscribe behind its back, so the hub
// knows that notifications may have been lost and wakes its waiters.
func (s *Store) Listen(ctx context.Context, subscribed func(), deliver func(payload string)) error {
	ps := s.client.Subscribe(ctx)
	defer ps.Close()
	// A receive blocks on the socket until idleCheck whatever ctx says;
	// closing the subscription ends it at once (a replica being stopped
	// had waited up to idleCheck here: 3.5s of every graceful restart).
	defer context.AfterFunc(ctx, func() { ps.Close() })()
	if err := ps.Subscribe(ctx, Channel); err != nil {
		return err
	}
	for {
		msg, err := ps.ReceiveTimeout(ctx, idleCheck)
		if isTimeout(err) && ctx.Err() == nil {
			err = s.ping(ctx, ps)
		}
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				subscribed()
			}
		case *redis.Message:
			deliver(m.Payload)
		}
	}
}

// ping checks an idle subscription; its pong is read by the next receive.
func (s *Store) ping(ctx context.Context, ps *redis.PubSub) error {
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return ps.Ping(pctx)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
