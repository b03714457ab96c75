package signature

import (
	"crypto/sha256"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func FuzzParseSignatureHeader(f *testing.F) {
	for _, s := range []string{
		"t=1614265330,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
		"t=1614265330,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd,v1=00",
		"t=1,v0=abc,v1=",
		"t=,v1=",
		"t=-9223372036854775808,v1=aa",
		"t=99999999999999999999",
		"v1=abc,t=1",
		",,,=,==,t==1",
		"t=1, v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd ",
		"",
		"\x00t=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		ts, sigs, err := parseSignatureHeader(header)
		if err != nil {
			var sve *VerificationError
			if !errors.As(err, &sve) || sve.Reason == "" {
				t.Fatalf("error %v is not a VerificationError", err)
			}
			return
		}
		if len(sigs) == 0 || len(sigs) > maxSignatures {
			t.Fatalf("%d signatures accepted", len(sigs))
		}
		for _, s := range sigs {
			if len(s) != sha256.Size {
				t.Fatalf("signature of %d bytes accepted", len(s))
			}
		}
		if !strings.Contains(header, "t="+strconv.FormatInt(ts, 10)) && !strings.Contains(header, "t=+") && !strings.Contains(header, "t=0") && !strings.Contains(header, "t=-0") {
			t.Fatalf("timestamp %d not in %q", ts, header)
		}
		// Verification of any parsed header never panics either.
		_ = VerifySignature([]byte("{}"), header, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", VerifyOptions{})
	})
}
