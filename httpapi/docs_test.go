package httpapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/settleflow/settleflow/httpapi"
)

// apiCodes returns the error codes of the API, as codes.go declares them:
// the values of its Code* constants (the Failure* ones are failure codes of
// workflows, not of answers).
func apiCodes(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../wire/codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				codes[name.Name] = v
			}
		}
	}
	if len(codes) < 30 {
		t.Fatalf("found %d codes in codes.go", len(codes))
	}
	return codes
}

// section is the text of a markdown file from the heading that starts with
// heading to the next heading of the same level.
func section(t *testing.T, file, heading string) string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, "\n"+heading)
	if i < 0 {
		t.Fatalf("%s has no heading %q", file, heading)
	}
	s = s[i+1:]
	level := heading[:strings.IndexByte(heading, ' ')+1]
	if j := strings.Index(s[1:], "\n"+level); j >= 0 {
		s = s[:j+1]
	}
	return s
}

// errorTable is the table of s that starts with the row "| status | type |
// codes |".
func errorTable(t *testing.T, s string) string {
	t.Helper()
	i := strings.Index(s, "| status | type | codes |")
	if i < 0 {
		t.Fatal("no error table")
	}
	s = s[i:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return s
}

// Every error code of codes.go and every error type of the API is in the
// error table of docs/api.md §6 and in the README's, so that neither can
// fall behind the code.
func TestErrorTablesListEveryCode(t *testing.T) {
	docs := errorTable(t, section(t, "../docs/api.md", "## 6. Errors"))
	readme := errorTable(t, section(t, "../docs/embedding.md", "## The HTTP API"))
	for name, code := range apiCodes(t) {
		if !strings.Contains(docs, "`"+code+"`") {
			t.Errorf("the error table of docs/api.md §6 does not list %s (%s)", code, name)
		}
		if !strings.Contains(readme, "`"+code+"`") {
			t.Errorf("the README's error table does not list %s (%s)", code, name)
		}
	}
	for _, typ := range []string{httpapi.TypeInvalidRequest, httpapi.TypeAuthentication, httpapi.TypePermission, httpapi.TypePayment,
		httpapi.TypeIdempotency, httpapi.TypeRateLimit, httpapi.TypeAPI} {
		if !strings.Contains(docs, "`"+typ+"`") || !strings.Contains(readme, "`"+typ+"`") {
			t.Errorf("error type %s is missing from the error table of docs/api.md §6 or the README", typ)
		}
	}
}
