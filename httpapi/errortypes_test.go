package httpapi_test

import (
	"testing"

	"github.com/settleflow/settleflow/httpapi"
	"github.com/settleflow/settleflow/wire"
)

// httpapi's untyped error types are the strings of wire's, which the client
// reads.
func TestErrorTypesAreTheWires(t *testing.T) {
	for got, want := range map[string]wire.ErrorType{
		httpapi.TypeInvalidRequest: wire.ErrorTypeInvalidRequest,
		httpapi.TypeAuthentication: wire.ErrorTypeAuthentication,
		httpapi.TypePermission:     wire.ErrorTypePermission,
		httpapi.TypePayment:        wire.ErrorTypePayment,
		httpapi.TypeIdempotency:    wire.ErrorTypeIdempotency,
		httpapi.TypeRateLimit:      wire.ErrorTypeRateLimit,
		httpapi.TypeAPI:            wire.ErrorTypeAPI,
	} {
		if got != string(want) {
			t.Errorf("httpapi type %q, wire type %q", got, want)
		}
	}
}
