// Command fiber-v3 serves idemcheck's charge protocol with Fiber v3 and
// its idempotency middleware (github.com/gofiber/fiber/v3/middleware/
// idempotency), configured as its documentation shows: app.Use(
// idempotency.New(idempotency.Config{Lifetime: …})), the default key
// header (X-Idempotency-Key) and key check (36 characters), and either
// the default in-memory storage or github.com/gofiber/storage/redis/v3.
// The handler only charges (package charge): it adds no idempotency of
// its own.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/middleware/idempotency"
	"github.com/gofiber/storage/redis/v3"

	"idemcheck.gallery/charge"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	storage := flag.String("storage", "memory", "memory (the middleware's default) or redis (REDIS_URL)")
	flag.Parse()
	lifetime, err := time.ParseDuration(os.Getenv("IDEMPOTENCY_TTL"))
	if err != nil {
		return fmt.Errorf("IDEMPOTENCY_TTL: %w", err)
	}
	cfg := idempotency.Config{Lifetime: lifetime}
	switch *storage {
	case "memory":
	case "redis":
		cfg.Storage = redis.New(redis.Config{URL: os.Getenv("REDIS_URL")})
	default:
		return fmt.Errorf("--storage: expected memory or redis, got %q", *storage)
	}
	gw := charge.FromEnv()
	app := fiber.New()
	app.Use(idempotency.New(cfg))
	app.Get("/healthz", func(c fiber.Ctx) error { return c.SendString("ok") })
	app.Post("/v1/charges", func(c fiber.Ctx) error {
		a := gw.Charge(c.Body())
		if a.Err != nil {
			return fiber.NewError(fiber.StatusBadGateway, a.Err.Error())
		}
		return c.Status(a.Status).JSON(a.Body)
	})
	return app.Listen(os.Getenv("LISTEN_ADDR"), fiber.ListenConfig{DisableStartupMessage: true})
}
