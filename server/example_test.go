package server_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/server"
)

// An application embeds the whole server: its products, and every other
// default of the reference server — SQLite and a self-signed certificate in
// ./settleflow-data, the embedded test chain, HTTPS on 127.0.0.1:8443. It
// serves until SIGINT or SIGTERM, then stops gracefully.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	products := settleflow.NewProducts()
	// settleflow.Register(products, settleflow.Product[YourPayload]{...}) for each product.

	srv, err := server.New(ctx, server.Config{
		Products: products,
		Output:   os.Stdout, // the first start's test key, the address served
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
