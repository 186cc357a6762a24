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
	"log"
	"os"

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
	set, err := charge.Parse(os.Args[1:])
	if err != nil {
		return err
	}
	cfg := idempotency.Config{Lifetime: set.Lifetime}
	if set.Storage == "redis" {
		cfg.Storage = redis.New(redis.Config{URL: set.RedisURL})
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
	return app.Listen(set.ListenAddr, fiber.ListenConfig{DisableStartupMessage: true})
}
