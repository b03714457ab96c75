package wire_test

import (
	"os/exec"
	"strings"
	"testing"
)

// module is the settleflow module's path.
const module = "github.com/settleflow/settleflow"

// leaves are the packages that must depend on nothing outside the standard
// library, golang.org/x and the packages named in allowedDeps: what a
// program that only calls a settleflow server, or only receives its
// webhooks, compiles in, and the contracts a Store or Settler implements
// (driver), which the engine's stages import.
var leaves = []string{
	module + "/wire",
	module + "/driver",
	module + "/client",
	module + "/webhook/signature",
	module + "/examples/webhook-receiver",
}

// allowedDeps are the settleflow packages a leaf may import.
var allowedDeps = map[string]bool{
	module + "/wire":              true,
	module + "/webhook/signature": true,
}

// allowedDep reports whether a leaf may depend on the package path, which
// `go list` reports as standard or not.
func allowedDep(path string, standard bool) bool {
	return standard || allowedDeps[path] ||
		strings.HasPrefix(path, "golang.org/x/") || strings.HasPrefix(path, "vendor/golang.org/x/")
}

// TestLeafDependencies fails when client, wire, driver, webhook/signature or
// the webhook receiver example gains a dependency outside the standard library,
// golang.org/x and the two leaf packages, naming the package and what
// imports it.
func TestLeafDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	for _, leaf := range leaves {
		out, err := exec.Command(goTool, "list", "-deps",
			"-f", `{{.ImportPath}} {{.Standard}} {{join .Imports " "}}`, leaf).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", leaf, err, out)
		}
		importers := map[string][]string{}
		var bad []string
		for line := range strings.Lines(string(out)) {
			fields := strings.Fields(line)
			if len(fields) < 2 {
				t.Fatalf("go list -deps %s: unexpected line %q", leaf, line)
			}
			path, standard := fields[0], fields[1] == "true"
			for _, imp := range fields[2:] {
				importers[imp] = append(importers[imp], path)
			}
			if path != leaf && !allowedDep(path, standard) {
				bad = append(bad, path)
			}
		}
		if len(bad) == 0 {
			continue
		}
		var msg strings.Builder
		for _, path := range bad {
			msg.WriteString("\n\t" + path + " (imported by " + strings.Join(importers[path], ", ") + ")")
		}
		t.Errorf("%s may use only the standard library, golang.org/x, %s/wire and %s/webhook/signature; it depends on%s",
			leaf, module, module, msg.String())
	}
}
