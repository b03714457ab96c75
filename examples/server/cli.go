package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// The command line: groups of subcommands (keys, webhooks), each described
// once in a table from which the usage texts, help and argument checks all
// come. Every group and subcommand answers -h, --help and help with its
// usage on stdout (exit 0); a usage error prints the usage on stderr and
// exits 2; any other error is one sentence on stderr, exit 1.

// subcommand is one subcommand of a group.
type subcommand struct {
	name string
	// args is the synopsis of the positional arguments ("KEY_ID"), and nargs
	// how many there must be.
	args    string
	nargs   int
	summary string
	// flags registers the subcommand's flags on fs; nil for none.
	flags func(fs *flag.FlagSet)
	run   func(ctx context.Context, x *cmdContext) error
}

// group is a command with subcommands.
type group struct {
	name    string
	summary string
	// detail, optional, is printed under the summary in the group's usage.
	detail string
	// open prepares what the subcommands share (a database handle); the
	// returned func releases it.
	open func(ctx context.Context, c config) (*cmdContext, func(), error)
	subs []subcommand
}

// cmdContext is what a subcommand runs with.
type cmdContext struct {
	c      config
	args   []string // the positional arguments
	stdout io.Writer
	stderr io.Writer
	// Set by the group's open:
	shared any
}

// groups are the commands with subcommands, in the order usage lists them.
func groups() []*group {
	return []*group{keysGroup(), productsGroup(), webhooksGroup(), dashboardGroup(), chainGroup(), customersGroup(), refundsGroup()}
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// wantsHelp reports whether args (a subcommand's) ask for help anywhere
// before a "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return len(args) > 0 && args[0] == "help"
}

func (g *group) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: server [global flags] %s COMMAND [flags]\n\n%s\n", g.name, g.summary)
	if g.detail != "" {
		fmt.Fprintf(w, "\n%s\n", wrap(g.detail, 80))
	}
	fmt.Fprint(w, "\nCommands:\n")
	for _, s := range g.subs {
		fmt.Fprintf(w, "  %-44s %s\n", strings.TrimSpace(s.name+" "+s.args), s.summary)
	}
	fmt.Fprintf(w, "\nRun 'server %s COMMAND -h' for a command's flags.\n", g.name)
}

func (g *group) subUsage(w io.Writer, s *subcommand, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: server [global flags] %s %s", g.name, s.name)
	if s.args != "" {
		fmt.Fprintf(w, " %s", s.args)
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprint(w, " [flags]")
	}
	fmt.Fprintf(w, "\n\n%s\n", s.summary)
	if hasFlags {
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

// run runs the group's subcommand named by args[0].
func (g *group) run(ctx context.Context, c config, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		g.usage(stderr)
		return usageError{fmt.Errorf("%s: missing command", g.name)}
	}
	if isHelp(args[0]) {
		if len(args) > 1 {
			for i := range g.subs {
				if g.subs[i].name == args[1] {
					g.subUsage(stdout, &g.subs[i], g.flagSet(&g.subs[i]))
					return nil
				}
			}
		}
		g.usage(stdout)
		return nil
	}
	var s *subcommand
	for i := range g.subs {
		if g.subs[i].name == args[0] {
			s = &g.subs[i]
		}
	}
	if s == nil {
		g.usage(stderr)
		return usageError{fmt.Errorf("%s: unknown command %q", g.name, args[0])}
	}
	fs := g.flagSet(s)
	if wantsHelp(args[1:]) {
		g.subUsage(stdout, s, fs)
		return nil
	}
	// Positional arguments may come before the flags (keys rotate KEY_ID
	// --expire-in 1h) or after them.
	rest := args[1:]
	var pos []string
	for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	fs.SetOutput(io.Discard) // errors are reported once, below
	if err := fs.Parse(rest); err != nil {
		g.subUsage(stderr, s, fs)
		return usageError{fmt.Errorf("%s %s: %w", g.name, s.name, err)}
	}
	pos = append(pos, fs.Args()...)
	if len(pos) != s.nargs {
		g.subUsage(stderr, s, fs)
		want := "no arguments"
		if s.nargs > 0 {
			want = s.args
		}
		return usageError{fmt.Errorf("%s %s takes %s, got %d argument(s)", g.name, s.name, want, len(pos))}
	}
	x, release, err := g.open(ctx, c)
	if err != nil {
		return err
	}
	defer release()
	x.c, x.args, x.stdout, x.stderr = c, pos, stdout, stderr
	return s.run(ctx, x)
}

func (g *group) flagSet(s *subcommand) *flag.FlagSet {
	fs := flag.NewFlagSet(g.name+" "+s.name, flag.ContinueOnError)
	if s.flags != nil {
		s.flags(fs)
	}
	return fs
}

// need returns a usage error unless ok.
func need(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return usageError{fmt.Errorf(format, args...)}
}

// printJSON writes v as indented JSON: the --json form of every list.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// versionText is what `server version` prints: the module's version and the
// commit it was built from, from the build information Go embeds.
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "settleflow server (no build information)\n"
	}
	var b strings.Builder
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	fmt.Fprintf(&b, "settleflow server %s\n", v)
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if r := settings["vcs.revision"]; r != "" {
		modified := ""
		if settings["vcs.modified"] == "true" {
			modified = " (modified)"
		}
		fmt.Fprintf(&b, "commit %s%s, %s\n", r, modified, settings["vcs.time"])
	}
	fmt.Fprintf(&b, "%s %s/%s\n", bi.GoVersion, settings["GOOS"], settings["GOARCH"])
	return b.String()
}

// isUsage reports whether err is a usage error (exit 2).
func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

// wrap breaks s into lines of at most width characters, between words.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len([]rune(w)) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len([]rune(w))
	}
	return b.String()
}
