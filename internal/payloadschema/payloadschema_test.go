package payloadschema

import (
	"errors"
	"strings"
	"testing"
)

func TestCompileRefusesOtherDocuments(t *testing.T) {
	for _, ref := range []string{"https://example.com/s.json", "file:///etc/passwd", "other.json"} {
		_, err := Compile([]byte(`{"type": "object", "properties": {"a": {"$ref": "` + ref + `"}}}`))
		var se *SchemaError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "refers to another document ("+ref+")") {
			t.Errorf("%s: %v", ref, err)
		}
	}
	if _, err := Compile([]byte(`{"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}`)); err != nil {
		t.Errorf("a reference inside the schema: %v", err)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	s, err := Compile([]byte(`{"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["c", "b"]}}, "additionalProperties": false}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		payload string
		kind    ViolationKind
		path    string
	}{
		{`{"a": {"b": "x", "c": 1}}`, Invalid, "a/b"},
		{`{"a": {}}`, Missing, "a/b"}, // the first missing, by name
		{`{"z": 1}`, Unknown, "z"},
	} {
		v, err := Decode([]byte(c.payload))
		if err != nil {
			t.Fatal(err)
		}
		var vi *Violation
		if err := Validate(s, v); !errors.As(err, &vi) || vi.Kind != c.kind || strings.Join(vi.Path, "/") != c.path {
			t.Errorf("%s: %v", c.payload, err)
		}
	}
}
