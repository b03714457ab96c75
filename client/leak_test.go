package client_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow/client"
)

// leaks reports where key, or its secret part, shows in s: verbatim, in hex
// or base64-free forms a printer may use.
func leaks(s, key string) bool {
	secret := key[strings.LastIndex(key, "_")+1:]
	for _, form := range []string{key, secret[:16], secret[len(secret)-16:], hex.EncodeToString([]byte(secret[:16])), fmt.Sprintf("%q", secret)} {
		if strings.Contains(strings.ToLower(s), strings.ToLower(form)) {
			return true
		}
	}
	return false
}

// TestKeyNeverLeaks prints, logs and marshals a client and the errors of its
// calls every way the standard library offers, and looks for the key.
func TestKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	key := ref.key
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClient(t, client.WithLogger(logger))

	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T", "%p"} {
		out = append(out, fmt.Sprintf(verb, c), fmt.Sprintf(verb, *c), fmt.Sprintf(verb, []any{c, c.Workflows, c.Events}))
	}
	out = append(out, fmt.Sprint(c), fmt.Sprintln(c, *c))
	if b, err := json.Marshal(c); err == nil {
		out = append(out, string(b))
	}
	logger.Info("the client", "client", c, "value", *c, "workflows", c.Workflows)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("the client", "client", c, "any", any(*c))

	// Errors of every kind, and the retries that lead to them, logged.
	ctx := context.Background()
	collect := func(err error) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		out = append(out, err.Error(), fmt.Sprintf("%v %+v %#v %q %x", err, err, err, err, err))
		for e := err; e != nil; e = errors.Unwrap(e) {
			out = append(out, fmt.Sprintf("%#v", e))
			var apiErr *client.APIError
			if errors.As(e, &apiErr) {
				out = append(out, fmt.Sprintf("%#v %v", *apiErr, apiErr.Header))
			}
		}
	}
	wrong := key[:len(key)-4] + "AAAA" // a well-formed key the server does not know
	_, err := client.New(wrong, client.WithBaseURL(ref.baseURL), client.WithRootCAs(ref.pool)).Products.List(ctx)
	collect(err)
	if leaks(err.Error(), wrong) {
		t.Fatalf("the wrong key is in %q", err)
	}
	_, err = c.Workflows.Fetch(ctx, "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J")
	collect(err)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	refused := client.New(key, client.WithBaseURL("http://"+addr), client.WithLogger(logger), client.WithBackoff(time.Millisecond, time.Millisecond, time.Second))
	_, err = refused.Workflows.Create(ctx, ticketParams("cus_leak"))
	collect(err)
	out = append(out, fmt.Sprintf("%+v", refused))
	p := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		answer(w, http.StatusServiceUnavailable, "api_error", "service_unavailable")
	})
	_, err = p.client(client.WithLogger(logger), fast).Workflows.Cancel(ctx, "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J")
	collect(err)
	// A server that echoes the key in its error (none should) has it
	// scrubbed from the message and the param.
	echo := newProxy(t, func(p *proxy, n int, w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		k := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"type": "invalid_request_error", "code": "parameter_invalid",
			"message": "bad key " + k + "!", "param": k, "requestId": "req_ECHO"}})
	})
	_, err = echo.client().Products.List(ctx)
	collect(err)
	if !strings.Contains(err.Error(), "bad key sk_test_…") {
		t.Fatalf("echoed message: %v", err)
	}
	// A key read with its line break: refused before sending, unquoted.
	_, err = client.New(key+"\n", client.WithBaseURL(ref.baseURL), client.WithRootCAs(ref.pool)).Products.List(ctx)
	collect(err)
	_, err = client.New(key, client.WithBaseURL("http://example.com")).Products.List(ctx)
	collect(err)
	if !strings.Contains(logs.String(), "settleflow: retrying") {
		t.Fatalf("nothing logged:\n%s", logs.String())
	}
	out = append(out, logs.String())

	for _, s := range out {
		if leaks(s, key) {
			t.Fatalf("the key leaks in %q", s)
		}
	}
	if !strings.Contains(fmt.Sprint(c), "sk_test_…"+key[len(key)-4:]) {
		t.Fatalf("the client prints as %q", fmt.Sprint(c))
	}

	// Nothing reachable from a client by reflection, as a debugger's dump or
	// a diff library walks it, holds the key.
	fresh := client.New(key, client.WithBaseURL(ref.baseURL), client.WithRootCAs(ref.pool))
	if path := findString(reflect.ValueOf(fresh), key, "client", map[uintptr]bool{}); path != "" {
		t.Fatalf("the key is reachable at %s", path)
	}
}

// findString walks v (following pointers, interfaces, structs, slices and
// maps, unexported fields included) and returns the path of a string or
// byte slice that contains s.
func findString(v reflect.Value, s, path string, seen map[uintptr]bool) string {
	switch v.Kind() {
	case reflect.String:
		if strings.Contains(v.String(), s) {
			return path
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		if v.Kind() == reflect.Pointer {
			if seen[v.Pointer()] {
				return ""
			}
			seen[v.Pointer()] = true
		}
		return findString(v.Elem(), s, path, seen)
	case reflect.Struct:
		for i := range v.NumField() {
			if p := findString(v.Field(i), s, path+"."+v.Type().Field(i).Name, seen); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			if bytes.Contains(v.Bytes(), []byte(s)) {
				return path
			}
			return ""
		}
		for i := range v.Len() {
			if p := findString(v.Index(i), s, fmt.Sprintf("%s[%d]", path, i), seen); p != "" {
				return p
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if p := findString(it.Key(), s, path+"[key]", seen); p != "" {
				return p
			}
			if p := findString(it.Value(), s, path+"[value]", seen); p != "" {
				return p
			}
		}
	}
	return ""
}
