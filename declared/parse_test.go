package declared

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/settleflow/settleflow"
)

// valid is a products file with one product of each pricing model, laid
// out one field a line so that the tests below can name lines.
const valid = `{
  "products": [
    {
      "name": "pages",
      "description": "Reads pages.",
      "payloadSchema": {
        "type": "object",
        "properties": {
          "pages": {"type": "integer", "minimum": 0, "maximum": 1000},
          "title": {"type": "string"},
          "tags": {"type": "array", "items": {"type": "string"}},
          "tier": {"enum": ["basic", "gold"]},
          "ratio": {"type": "number"}
        },
        "required": ["pages"],
        "additionalProperties": false
      },
      "example": {"pages": 3},
      "pricing": {"model": "fixed", "targetMargin": 0.3, "minimumCharge": 50},
      "pricingSummary": "0.10 USD per page",
      "estimate": {
        "base": 100,
        "perUnit": [
          {"pointer": "/pages", "unit": "value", "cost": 10}
        ]
      }
    },
    {
      "name": "capped",
      "payloadSchema": {"type": "object"},
      "pricing": {"model": "capped", "targetMargin": 0.2, "minimumCharge": 10, "markup": 0.25},
      "estimate": {"base": 40}
    }
  ]
}
`

// edit replaces old (which must occur once) by new in valid.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if strings.Count(valid, old) != 1 {
		t.Fatalf("%q occurs %d times in the file", old, strings.Count(valid, old))
	}
	return strings.Replace(valid, old, new, 1)
}

func TestParseValid(t *testing.T) {
	ps, err := Parse("products.json", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name != "pages" || ps[1].Name != "capped" {
		t.Fatalf("got %d products", len(ps))
	}
	cost, err := ps[0].Estimate.Cost(map[string]any{"pages": jsonNumber("7")})
	if err != nil || cost != 170 {
		t.Fatalf("cost %d, %v; want 170", cost, err)
	}
	// Source is the product as declared, and reads back the same.
	if want := `{"name":"capped","payloadSchema":{"type":"object"},"pricing":{"model":"capped","targetMargin":0.2,"minimumCharge":10,"markup":0.25},"estimate":{"base":40}}`; string(ps[1].Source) != want {
		t.Errorf("source %s", ps[1].Source)
	}
	again, err := Parse("again.json", []byte(`{"products": [`+string(ps[0].Source)+`, `+string(ps[1].Source)+`]}`))
	if err != nil || len(again) != 2 || again[0].Price != ps[0].Price || string(again[0].Source) != string(ps[0].Source) {
		t.Errorf("read back: %v", err)
	}
}

// Each refusal names the file, the line and column of the field at fault,
// the field's path and what is wrong.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, file, want string
	}{
		{"unknown field", edit(t, `"pricingSummary": "0.10 USD per page",`, `"pricingSumary": "0.10 USD per page",`),
			`products.json:20:7: products[0].pricingSumary: unknown field (names are case-sensitive; see docs/products.md)`},
		{"unknown field in an estimate", edit(t, `{"pointer": "/pages", "unit": "value", "cost": 10}`, `{"pointer": "/pages", "unit": "value", "cost": 10, "caps": 3}`),
			`products.json:24:62: products[0].estimate.perUnit[0].caps: unknown field (names are case-sensitive; see docs/products.md)`},
		{"name in another case", edit(t, `"base": 100,`, `"Base": 100,`),
			`products.json:22:9: products[0].estimate.Base: unknown field (names are case-sensitive; see docs/products.md)`},
		{"duplicate field", edit(t, `"base": 100,`, `"base": 100, "base": 1,`),
			`products.json:22:22: products[0].estimate.base: given more than once`},
		{"wrong type", edit(t, `"base": 100,`, `"base": "100",`),
			`products.json:22:17: products[0].estimate.base: must be an integer that fits in 64 bits, not a string`},
		{"fraction for an amount", edit(t, `"minimumCharge": 50}`, `"minimumCharge": 0.5}`),
			`products.json:19:75: products[0].pricing.minimumCharge: must be an integer that fits in 64 bits, not 0.5`},
		{"trailing data", valid + "{}\n",
			`products.json:36:1: data after the products document`},
		{"not JSON", edit(t, `"base": 100,`, `"base": 100,,`),
			`products.json:22:21: products[0].estimate: not valid JSON`},
		{"bad schema", edit(t, `"pages": {"type": "integer", "minimum": 0, "maximum": 1000},`, `"pages": {"type": "integer", "minimum": "none"},`),
			`products.json:9:51: products[0].payloadSchema.properties.pages.minimum: the payload schema is refused: got string, want number`},
		{"schema with a bad pattern", edit(t, `"title": {"type": "string"},`, `"title": {"type": "string", "pattern": "(?=x)"},`),
			"products.json:10:50: products[0].payloadSchema.properties.title.pattern: the payload schema is refused: '(?=x)' is not valid regex: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
		{"schema with a remote reference", edit(t, `"type": "object",
        "properties": {`, `"$ref": "https://example.com/s.json", "type": "object",
        "properties": {`),
			`products.json:6:24: products[0].payloadSchema: the payload schema is refused: it refers to another document (https://example.com/s.json); a payload schema must be self-contained, with its definitions under $defs`},
		{"schema with a file reference", edit(t, `"type": "object",
        "properties": {`, `"$ref": "file:///etc/passwd", "type": "object",
        "properties": {`),
			`products.json:6:24: products[0].payloadSchema: the payload schema is refused: it refers to another document (file:///etc/passwd); a payload schema must be self-contained, with its definitions under $defs`},
		{"schema not of an object", edit(t, `"payloadSchema": {"type": "object"},`, `"payloadSchema": {"type": "array"},`),
			`products.json:30:24: products[1].payloadSchema: the payload schema must have "type": "object" (a payload is a JSON object)`},
		{"estimate names a field the schema lacks", edit(t, `"pointer": "/pages"`, `"pointer": "/page"`),
			`products.json:24:23: products[0].estimate.perUnit[0].pointer: "/page" is not a property of the payload schema`},
		{"estimate names a nested field the schema lacks", edit(t, `"pointer": "/pages"`, `"pointer": "/title/x"`),
			`products.json:24:23: products[0].estimate.perUnit[0].pointer: "/title/x" is not a property of /title in the payload schema`},
		{"value of a string", edit(t, `{"pointer": "/pages", "unit": "value", "cost": 10}`, `{"pointer": "/title", "unit": "value", "cost": 10}`),
			`products.json:24:23: products[0].estimate.perUnit[0].pointer: /title: unit "value" counts an integer, but the payload schema types the field string; give it "type": "integer"`},
		{"value of a number", edit(t, `{"pointer": "/pages", "unit": "value", "cost": 10}`, `{"pointer": "/ratio", "unit": "value", "cost": 10}`),
			`products.json:24:23: products[0].estimate.perUnit[0].pointer: /ratio: unit "value" counts an integer, but the payload schema types the field number; give it "type": "integer"`},
		{"value that may be negative", edit(t, `"minimum": 0, "maximum": 1000`, `"minimum": -1, "maximum": 1000`),
			`products.json:24:23: products[0].estimate.perUnit[0].pointer: /pages: unit "value" needs a field that cannot be negative; give it "minimum": 0 in the payload schema`},
		{"length of an integer", edit(t, `"unit": "value"`, `"unit": "length"`),
			`products.json:24:23: products[0].estimate.perUnit[0].pointer: /pages: unit "length" counts a string's characters or an array's items, but the payload schema types the field integer; give it "type": "string" or "array"`},
		{"bytes of an array", edit(t, `{"pointer": "/pages", "unit": "value", "cost": 10}`, `{"pointer": "/tags", "unit": "bytes", "cost": 10}`),
			`products.json:24:23: products[0].estimate.perUnit[0].pointer: /tags: unit "bytes" counts a string's UTF-8 bytes, but the payload schema types the field array; give it "type": "string"`},
		{"unknown unit", edit(t, `"unit": "value"`, `"unit": "words"`),
			`products.json:24:41: products[0].estimate.perUnit[0].unit: "words" is not a unit: use "value", "length" or "bytes"`},
		{"surcharge of a field without enum", edit(t, `"base": 100,`, `"base": 100, "surcharges": [{"pointer": "/title", "costs": {"a": 1}}],`),
			`products.json:22:49: products[0].estimate.surcharges[0].pointer: /title: costs by value need an enum field; give it "enum": [ … ] in the payload schema`},
		{"surcharge missing a value", edit(t, `"base": 100,`, `"base": 100, "surcharges": [{"pointer": "/tier", "costs": {"gold": 100}}],`),
			`products.json:22:67: products[0].estimate.surcharges[0].costs: no cost for "basic": give a cost (0 if none) for every value of the enum`},
		{"surcharge of a value the enum lacks", edit(t, `"base": 100,`, `"base": 100, "surcharges": [{"pointer": "/tier", "costs": {"basic": 0, "gold": 100, "platinum": 300}}],`),
			`products.json:22:105: products[0].estimate.surcharges[0].costs.platinum: "platinum" is not one of the field's values in the payload schema ("basic", "gold")`},
		{"negative cost", edit(t, `"cost": 10}`, `"cost": -10}`),
			`products.json:24:58: products[0].estimate.perUnit[0].cost: -10 must be between 0 and 100000000000000 minor units`},
		{"example that does not validate", edit(t, `"example": {"pages": 3},`, `"example": {"pages": 3000},`),
			`products.json:18:28: products[0].example.pages: the example does not validate against the payload schema: /pages is invalid: maximum: got 3,000, want 1,000`},
		{"example missing a required field", edit(t, `"example": {"pages": 3},`, `"example": {"title": "x"},`),
			`products.json:18:18: products[0].example: the example does not validate against the payload schema: /pages is required`},
		{"example with an unknown field", edit(t, `"example": {"pages": 3},`, `"example": {"pages": 3, "colour": "red"},`),
			`products.json:18:41: products[0].example.colour: the example does not validate against the payload schema: /colour is not a field of this product (names are case-sensitive)`},
		{"unknown pricing model", edit(t, `"model": "fixed"`, `"model": "flat"`),
			`products.json:19:28: products[0].pricing.model: "flat" is not a pricing model: use fixed, capped, success_fee or hybrid`},
		{"margin with a fifth decimal", edit(t, `"targetMargin": 0.3,`, `"targetMargin": 0.30001,`),
			`products.json:19:53: products[0].pricing.targetMargin: 0.30001 must be a fraction with at most four decimals (0.3 is 30 %)`},
		{"success fee without criteria", edit(t, `"model": "capped", "targetMargin": 0.2, "minimumCharge": 10, "markup": 0.25`, `"model": "success_fee", "targetMargin": 0.2`),
			`products.json:28:5: products[1]: success_fee pricing needs "successCriteria" (they decide the charge)`},
		{"markup of a fixed price", edit(t, `"minimumCharge": 50}`, `"minimumCharge": 50, "markup": 0.1}`),
			`products.json:19:89: products[0].pricing.markup: markup is for capped pricing only, not fixed`},
		{"bad name", edit(t, `"name": "capped",`, `"name": "Capped",`),
			`products.json:29:15: products[1].name: "Capped" must be 1-64 of [a-z0-9-] starting with a letter`},
		{"name twice", edit(t, `"name": "capped",`, `"name": "pages",`),
			`products.json:29:15: products[1].name: product "pages" is declared twice (first as products[0])`},
		{"estimate missing", edit(t, `,
      "estimate": {"base": 40}`, ``),
			`products.json:28:5: products[1]: "estimate" is required`},
		{"absent of a required field", strings.Replace(edit(t, `"required": ["pages"],`, `"required": ["pages", "tier"],`), `"base": 100,`, `"base": 100, "surcharges": [{"pointer": "/tier", "costs": {"basic": 0, "gold": 1}, "absent": 0}],`, 1),
			`products.json:22:102: products[0].estimate.surcharges[0].absent: /tier is required by the payload schema, so it is never absent: drop "absent"`},
		{"empty file", "  \n", `products.json:1:1: the file is empty; it holds one JSON object: {"products": [ … ]}`},
		{"not an object", "\n[]", `products.json:2:1: the file must hold one JSON object: {"products": [ … ]}`},
		{"duplicate name inside the schema", edit(t, `"title": {"type": "string"},`, `"title": {"type": "string", "type": "integer"},`),
			`products.json:10:39: products[0].payloadSchema.properties.title.type: given more than once`},
		{"duplicate name inside the example", edit(t, `"example": {"pages": 3},`, `"example": {"pages": 3, "pages": 4},`),
			`products.json:18:31: products[0].example.pages: given more than once`},
		{"no products", `{}`, `products.json:1:1: "products" is required: a list of products`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("products.json", []byte(c.file))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	path := t.TempDir() + "/mine.json"
	if err := os.WriteFile(path, []byte(edit(t, `"base": 100,`, `"bsae": 100,`)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.HasPrefix(err.Error(), "mine.json:22:9: products[0].estimate.bsae: unknown field") {
		t.Fatalf("got %v", err)
	}
}

// "remote": true makes a product remote: registered with no Executor, its
// RawProduct has Remote set and no Execute; a product that is not remote
// needs an Executor. ParseWith's RequireRemote refuses one without it.
func TestRemote(t *testing.T) {
	remote := edit(t, `"name": "capped",`, `"name": "capped", "remote": true,`)
	ps, err := Parse("products.json", []byte(remote))
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].Remote || !ps[1].Remote {
		t.Fatalf("Remote: %v, %v; want false, true", ps[0].Remote, ps[1].Remote)
	}
	if raw := ps[1].Raw(nil); !raw.Remote || raw.Execute != nil {
		t.Fatalf("the remote product's RawProduct: Remote %v, Execute set %v", raw.Remote, raw.Execute != nil)
	}
	r := settleflow.NewProducts()
	if err := Register(r, ps, nil); err == nil || !strings.Contains(err.Error(), "product pages is not remote and Register was given no Executor") {
		t.Fatalf("Register with no Executor: %v", err)
	}
	if len(r.List()) != 0 {
		t.Fatalf("a refused Register registered %v", r.List())
	}
	if err := Register(r, ps[1:], nil); err != nil {
		t.Fatal(err)
	}
	if got := r.Remote(); len(got) != 1 || got[0] != "capped" {
		t.Fatalf("remote products %v", got)
	}
	_, err = ParseWith("products.json", []byte(remote), Options{RequireRemote: true})
	if err == nil || err.Error() != `products.json:3:5: products[0].remote: "pages" is not remote: only workers run declared products here; give it "remote": true` {
		t.Fatalf("RequireRemote: %v", err)
	}
	_, err = ParseWith("products.json", []byte(remote), Options{Single: true})
	if err == nil || !strings.HasPrefix(err.Error(), `products.json:28:5: products[1]: a second product`) {
		t.Fatalf("Single: %v", err)
	}
	_, err = ParseWith("products.json", []byte(remote), Options{Taken: func(n string) string {
		if n == "capped" {
			return "taken"
		}
		return ""
	}})
	if err == nil || !strings.HasPrefix(err.Error(), `products.json:29:15: products[1].name: product "capped" cannot be declared here: taken`) {
		t.Fatalf("Taken: %v", err)
	}
}
