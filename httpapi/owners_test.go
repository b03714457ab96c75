package httpapi_test

import (
	"testing"

	"github.com/settleflow/settleflow"
)

// The owner endpoints where owners cannot be set: with no customer funds,
// and with a funds settler that does not set owners (the fundstest double),
// 409 refunds_not_supported; a body that is malformed is refused first,
// naming the parameter. (The shipped settler's answers are tested against
// the reference server: client.TestRealServerOwner and
// examples/server.TestOwnerOverHTTPS.)
func TestOwnerEndpointsRefusals(t *testing.T) {
	const addr = "0x00000000000000000000000000000000000000a1"
	grant := `{"address":"` + addr + `","nonce":"0x` + "11" + `","origin":"o","deadline":1900000000,"signature":"0x00"}`
	for _, c := range []struct {
		name string
		env  func(t *testing.T) *env
	}{
		{"no funds", func(t *testing.T) *env { return newEnv(t, envOptions{}) }},
		{"funds without owners", func(t *testing.T) *env { e, _ := newFundsEnv(t, envOptions{}); return e }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := c.env(t)
			key := e.keys.create(t, settleflow.Test, "starter")
			for _, r := range []struct {
				path, body  string
				status      int
				code, param string
			}{
				{"/v1/customers/cus_o/owner_grants", `{"address":"` + addr + `"}`, 409, "refunds_not_supported", ""},
				{"/v1/customers/cus_o/owner", grant, 409, "refunds_not_supported", ""},
				{"/v1/customers/cus_o/owner_grants", `{"address":"` + addr + `","extra":1}`, 400, "parameter_unknown", "extra"},
				{"/v1/customers/cus_o/owner_grants", `{"address":"` + addr + `","origin":""}`, 400, "parameter_invalid", "origin"},
				{"/v1/customers/cus_o/owner_grants", `{"address":"` + addr + `","deadline":1.5}`, 400, "parameter_invalid", "deadline"},
				{"/v1/customers/cus_o/owner_grants", `{"origin":"o"}`, 400, "parameter_missing", "address"},
				{"/v1/customers/cus_o/owner", `{"address":"` + addr + `"}`, 400, "parameter_missing", "nonce"},
				{"/v1/customers/cus_o/owner", `{"address":"` + addr + `","nonce":"n","origin":"o","signature":"s"}`, 400, "parameter_missing", "deadline"},
				{"/v1/customers/cus_o/owner", `{"address":7}`, 400, "parameter_invalid", "address"},
				{"/v1/customers/bad id/owner", grant, 400, "parameter_invalid", "customerId"},
				{"/v1/customers/cus_o/owner?x=1", grant, 400, "parameter_unknown", "x"},
			} {
				got := e.do("POST", r.path, key, r.body)
				eo := got.errorObject(t)
				if got.status != r.status || eo["code"] != r.code || (r.param != "" && eo["param"] != r.param) {
					t.Errorf("POST %s %s: %d %s; want %d %s naming %q", r.path, r.body, got.status, got.body, r.status, r.code, r.param)
				}
			}
			if got := e.do("GET", "/v1/customers/cus_o/owner", key, ""); got.status != 405 || got.header.Get("Allow") != "POST" {
				t.Errorf("GET …/owner: %d, Allow %q", got.status, got.header.Get("Allow"))
			}
		})
	}
}
