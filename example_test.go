package settleflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/settleflow/settleflow"
)

func ExamplePrice_Quote() {
	p := settleflow.Price{TargetMargin: 3000, MinimumCharge: 50} // 30 %, at least 0.50 USD
	for _, cost := range []int64{10, 200, 1001} {
		q, _ := p.Quote(cost)
		fmt.Printf("cost %d → quote %d (margin on cost %s)\n", cost, q, settleflow.AchievedMargin(q, cost))
	}
	// Output:
	// cost 10 → quote 50 (margin on cost 0.8)
	// cost 200 → quote 286 (margin on cost 0.3007)
	// cost 1001 → quote 1430 (margin on cost 0.3)
}

type ticket struct {
	TicketID string `json:"ticketId"`
}

func (t ticket) Validate() error {
	if t.TicketID == "" {
		return &settleflow.FieldError{Field: "ticketId", Message: "is required"}
	}
	return nil
}

func ExampleRegister() {
	products := settleflow.NewProducts()
	err := settleflow.Register(products, settleflow.Product[ticket]{
		Name:     "ticket-triage",
		Price:    settleflow.Price{TargetMargin: 3000},
		Estimate: func(ticket) (int64, error) { return 200, nil },
		Execute: func(ctx context.Context, t ticket) (settleflow.Execution, error) {
			return settleflow.Execution{ActualCost: 180, Result: map[string]string{"queue": "billing"}}, nil
		},
	})
	fmt.Println(err, products.List()[0].Name)

	// A bad payload is an *InvalidError naming the field on the wire.
	engine, _ := settleflow.New(settleflow.Options{Store: nilStore{}, Settler: nilSettler{}, Products: products,
		Notifier: settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })})
	_, err = engine.Quote(context.Background(), settleflow.CreateParams{Environment: settleflow.Test,
		Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId": 42}`)})
	var inv *settleflow.InvalidError
	if errors.As(err, &inv) {
		fmt.Println(inv.Code, inv.Param)
	}
	q, _ := engine.Quote(context.Background(), settleflow.CreateParams{Environment: settleflow.Test,
		Product: "ticket-triage", CustomerID: "cus_1", Payload: json.RawMessage(`{"ticketId": "T-42"}`)})
	fmt.Println(q.Quoted.Amount, q.Quoted.Currency)
	// Output:
	// <nil> ticket-triage
	// parameter_invalid payload.ticketId
	// 286 usd
}

// Quote touches no store and asks the settler only whether it settles the
// environment; these stand in for them.
type nilStore struct{ settleflow.Store }
type nilSettler struct{ settleflow.Settler }

func (nilSettler) Configured(settleflow.Environment) bool { return true }
