package webhook

import (
	"context"
	"errors"
	"fmt"
	"github.com/settleflow/settleflow/storage"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/ids"
)

func TestEndpointAPI(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	cfg := fastConfig(t)
	cfg.LookupIPAddr = fakeDNS(map[string][]string{"hooks.example": {"93.184.215.14"}})
	s, err := New(ctx, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// New migrates idempotently: a second Service on the same database works.
	if _, err := New(ctx, db, Config{}); err != nil {
		t.Fatal(err)
	}

	a, secretA, err := s.CreateEndpoint(ctx, EndpointParams{Environment: settleflow.Test, URL: "https://example.test/hooks", Description: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if !ids.Valid(ids.Endpoint, a.ID) || !a.Enabled() || a.CreatedAt.Location() != time.UTC || a.Description != "ci" {
		t.Fatalf("endpoint = %+v", a)
	}
	if len(testKey(t, secretA)) != 32 {
		t.Fatal("secret is not 32 random bytes")
	}
	b, secretB, err := s.CreateEndpoint(ctx, EndpointParams{Environment: settleflow.Live, URL: "https://hooks.example/x"})
	if err != nil {
		t.Fatal(err)
	}
	if secretA == secretB {
		t.Fatal("two endpoints share a secret")
	}

	for _, p := range []EndpointParams{
		{Environment: "prod", URL: "https://example.test"},
		{Environment: settleflow.Test, URL: "ftp://example.test"},
		{Environment: settleflow.Test, URL: "/relative"},
		{Environment: settleflow.Test, URL: ""},
	} {
		var inv *settleflow.InvalidError
		if _, _, err := s.CreateEndpoint(ctx, p); !errors.As(err, &inv) {
			t.Errorf("CreateEndpoint(%+v) = %v, want an InvalidError", p, err)
		}
	}

	all, err := s.ListEndpoints(ctx, "")
	if err != nil || len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID {
		t.Fatalf("ListEndpoints = %+v, %v", all, err)
	}
	if got := fmt.Sprintf("%+v %+v", *all[0], *all[1]); strings.Contains(got, secretA[6:]) || strings.Contains(got, secretB[6:]) {
		t.Fatal("a listed endpoint carries its secret")
	}
	if live, _ := s.ListEndpoints(ctx, settleflow.Live); len(live) != 1 || live[0].ID != b.ID {
		t.Fatalf("live endpoints = %+v", live)
	}

	if err := s.DisableEndpoint(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.GetEndpoint(ctx, a.ID); e.Enabled() || e.DisabledReason == "" {
		t.Fatalf("after disable: %+v", e)
	}
	if err := s.EnableEndpoint(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.GetEndpoint(ctx, a.ID); !e.Enabled() {
		t.Fatalf("after enable: %+v", e)
	}

	// Removing takes the endpoint's deliveries with it.
	if err := s.Notify(ctx, []settleflow.Event{testEvent(false)}); err != nil {
		t.Fatal(err)
	}
	if ds, _ := s.ListDeliveries(ctx, DeliveryQuery{EndpointID: a.ID}); len(ds) != 1 {
		t.Fatalf("%d deliveries", len(ds))
	}
	if err := s.RemoveEndpoint(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetEndpoint(ctx, a.ID); !errors.Is(err, ErrEndpointNotFound) {
		t.Fatalf("GetEndpoint after remove: %v", err)
	}
	if ds, _ := s.ListDeliveries(ctx, DeliveryQuery{EndpointID: a.ID}); len(ds) != 0 {
		t.Fatalf("%d deliveries left after remove", len(ds))
	}
	for name, err := range map[string]error{
		"remove":  s.RemoveEndpoint(ctx, a.ID),
		"disable": s.DisableEndpoint(ctx, "we_missing"),
		"enable":  s.EnableEndpoint(ctx, "we_missing"),
	} {
		if !errors.Is(err, ErrEndpointNotFound) {
			t.Errorf("%s of a missing endpoint: %v", name, err)
		}
	}
	if _, err := s.RotateSecret(ctx, "we_missing", time.Hour); !errors.Is(err, ErrEndpointNotFound) {
		t.Errorf("rotate of a missing endpoint: %v", err)
	}
	if _, err := s.GetDelivery(ctx, "whd_missing"); !errors.Is(err, ErrDeliveryNotFound) {
		t.Errorf("GetDelivery of a missing delivery: %v", err)
	}

	// Rotation with no overlap retires the old secret at once.
	if _, err := s.RotateSecret(ctx, b.ID, 0); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.GetEndpoint(ctx, b.ID); e.RotationEndsAt != nil {
		t.Fatalf("rotation without overlap still running: %v", e.RotationEndsAt)
	}
	var n int
	if err := db.Bun().NewSelect().Model((*secretRow)(nil)).Where("endpoint_id = ? AND (expires_at IS NULL OR expires_at > ?)", b.ID, storage.Micros(time.Now())).
		ColumnExpr("COUNT(*)").Scan(ctx, &n); err != nil || n != 1 {
		t.Fatalf("%d valid secrets after rotation without overlap, %v", n, err)
	}
}
