package declared

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Error is a refused products file: where (file, line and column, both
// counted from 1, the column in characters) and which field (Path, as
// "products[2].estimate.perUnit[0].pointer"), and what is wrong.
type Error struct {
	File    string
	Line    int
	Column  int
	Path    string
	Message string
}

// Error is "file:line:column: path: message".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ":")
	}
	fmt.Fprintf(&b, "%d:%d: ", e.Line, e.Column)
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// doc is a products file being checked: its bytes, for positions, and its
// decoded form, for telling array indices from member names in paths.
type doc struct {
	file string
	data []byte
	tree any // nil if the file is not JSON
}

func newDoc(file string, data []byte) *doc {
	d := &doc{file: file, data: data}
	dec := stdjson.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&d.tree) != nil {
		d.tree = nil
	}
	return d
}

// errAt is an *Error at the value path names (member names and array
// indices from the top), or at the nearest enclosing value found.
func (d *doc) errAt(path []string, format string, args ...any) *Error {
	return d.errOffset(d.offsetOf(path), path, format, args...)
}

// errOffset is an *Error at byte offset off, naming path.
func (d *doc) errOffset(off int64, path []string, format string, args ...any) *Error {
	line, col := position(d.data, off)
	return &Error{File: d.file, Line: line, Column: col, Path: d.display(path), Message: fmt.Sprintf(format, args...)}
}

// position is the line and column (in characters) of byte offset off.
func position(data []byte, off int64) (line, col int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[start:])
}

// display writes path as people read it: array indices in brackets, member
// names after dots, a name that is not an identifier quoted
// (products[0].estimate.surcharges[0].costs["high priority"]).
func (d *doc) display(path []string) string {
	var b strings.Builder
	node := d.tree
	for _, seg := range path {
		var isIndex bool
		switch n := node.(type) {
		case []any:
			isIndex = true
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(n) {
				node = n[i]
			} else {
				node = nil
			}
		case map[string]any:
			node = n[seg]
		default:
			// Not in the tree (a syntax error, or past the end): an
			// index if it reads as one.
			_, err := strconv.Atoi(seg)
			isIndex = err == nil
			node = nil
		}
		switch {
		case isIndex:
			b.WriteString("[" + seg + "]")
		case isIdent(seg):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		default:
			b.WriteString("[" + strconv.Quote(seg) + "]")
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && (r >= '0' && r <= '9')) {
			continue
		}
		return false
	}
	return true
}

// offsetOf is the byte offset of the value at path, or of the nearest
// enclosing value that exists; 0 if the file is not JSON.
func (d *doc) offsetOf(path []string) int64 {
	best := int64(-1)
	bestLen := -1
	dec := jsontext.NewDecoder(bytes.NewReader(d.data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for {
		before := dec.InputOffset()
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		if k, n := dec.StackIndex(dec.StackDepth()); k == '{' && n%2 == 1 && tok.Kind() != '{' && tok.Kind() != '[' {
			continue // a member name, not a value
		}
		if tok.Kind() == '}' || tok.Kind() == ']' {
			continue
		}
		var at []string
		for t := range dec.StackPointer().Tokens() {
			at = append(at, t)
		}
		if len(at) > len(path) || len(at) <= bestLen || !hasPrefix(path, at) {
			continue
		}
		best, bestLen = skipSpace(d.data, before), len(at)
		if len(at) == len(path) {
			break
		}
	}
	if best < 0 {
		return 0
	}
	return best
}

func hasPrefix(path, prefix []string) bool {
	for i := range prefix {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}

// skipSpace skips white space and the separators ',' and ':' from off.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}
