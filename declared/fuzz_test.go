package declared

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/payloadschema"
)

// FuzzParse: whatever the file, Parse does not panic; a refusal is an
// *Error whose line and column lie in the file; an accepted file's
// products register on an engine's registry and price their examples.
//
//	go test ./declared -run '^$' -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	if demo, err := os.ReadFile("../examples/server/testdata/demo-products.json"); err == nil {
		f.Add(demo)
	}
	for _, e := range [][2]string{
		{`"base": 100,`, `"bsae": 100,`},
		{`"base": 100,`, `"base": 100, "base": 1,`},
		{`"pointer": "/pages"`, `"pointer": "/page"`},
		{`"unit": "value"`, `"unit": "length"`},
		{`"example": {"pages": 3},`, `"example": {"pages": 3000},`},
		{`"base": 100,`, `"base": 100, "surcharges": [{"pointer": "/tier", "costs": {"basic": 0, "gold": 100}}],`},
		{`"cost": 10}`, `"costBy": {"pointer": "/tier", "costs": {"basic": 1, "gold": 2}, "absent": 3}, "per": 7, "maxUnits": 9}`},
		{`"model": "fixed"`, `"model": "hybrid", "baseShare": 0.3`},
		{`"minimum": 0, "maximum": 1000`, `"minimum": 0, "maximum": 1e400`},
	} {
		f.Add([]byte(strings.Replace(valid, e[0], e[1], 1)))
	}
	f.Add([]byte(valid + "x"))
	f.Add([]byte(`{"products": []}`))
	f.Add([]byte("\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := Parse("f.json", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T %v: not an *Error", err, err)
			}
			lines := bytes.Count(data, []byte{'\n'}) + 1
			if e.File != "f.json" || e.Line < 1 || e.Line > lines || e.Column < 1 || e.Message == "" {
				t.Fatalf("%+v: outside the file of %d lines", e, lines)
			}
			return
		}
		r := settleflow.NewProducts()
		if err := Register(r, ps, nopExecutor{}); err != nil {
			t.Fatalf("accepted, not registered: %v", err)
		}
		for _, p := range ps {
			if p.Example == nil {
				continue
			}
			v, err := payloadschema.Decode(p.Example)
			if err != nil {
				t.Fatal(err)
			}
			c, err := p.Estimate.Cost(v)
			if err != nil || c < 0 || c > settleflow.MaxAmount+1 {
				t.Fatalf("%s: example costs %d, %v", p.Name, c, err)
			}
		}
	})
}
