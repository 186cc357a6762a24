package reference

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Listen is PostgresStore's Notifier: LISTEN on NotifyChannel through its
// own connection, made with the pool's connection settings but outside the
// pool, until the connection fails or ctx ends.
func (s *PostgresStore) Listen(ctx context.Context, subscribed func(), deliver func(payload string)) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{NotifyChannel}.Sanitize()); err != nil {
		return err
	}
	subscribed()
	for {
		n, err := waitNotification(ctx, conn)
		if err != nil {
			return err
		}
		if n != nil {
			deliver(n.Payload)
		}
	}
}

// waitNotification returns the next notification, or nil after an idle
// interval in which a ping proved the connection alive: a silently dead
// connection (a partition) is noticed within seconds instead of never.
func waitNotification(ctx context.Context, conn *pgx.Conn) (*pgconn.Notification, error) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	n, err := conn.WaitForNotification(wctx)
	cancel()
	if err == nil || ctx.Err() != nil {
		return n, err
	}
	if !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return nil, conn.Ping(pctx)
}
