package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Over TLS 1.2 the reference server negotiates only ECDHE with an AEAD
// (Mozilla's intermediate profile): against the real server on loopback,
// with its own self-signed ECDSA certificate and with an RSA one (in
// DATA/tls, where it loads a certificate from), a client offering one suite at a time gets exactly the
// ECDHE AES-GCM and ChaCha20-Poly1305 suites for its key type and a refused
// handshake for every other suite Go can offer (CBC with SHA-1 or SHA-256
// MACs, RSA key exchange, 3DES, RC4). TLS 1.3 still works.
func TestTLSCipherSuites(t *testing.T) {
	aead := func(id uint16) bool {
		name := tls.CipherSuiteName(id)
		return strings.HasPrefix(name, "TLS_ECDHE_") && (strings.Contains(name, "_GCM_") || strings.Contains(name, "_CHACHA20_POLY1305"))
	}
	// Every suite Go's client can offer over TLS 1.2, secure or not.
	var all []*tls.CipherSuite
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if slices.Contains(cs.SupportedVersions, tls.VersionTLS12) {
			all = append(all, cs)
		}
	}
	cbc := tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA // the suite the report negotiated
	if !slices.ContainsFunc(all, func(cs *tls.CipherSuite) bool { return cs.ID == cbc }) {
		t.Fatal("Go's client no longer offers ECDHE-ECDSA-AES128-SHA: the test would not try it")
	}

	for _, srv := range []struct {
		name string
		key  string // which AEAD suites this certificate can use
		rsa  bool
	}{
		{"self-signed ECDSA", "_ECDSA_", false},
		{"RSA", "_RSA_", true},
	} {
		t.Run(srv.name, func(t *testing.T) {
			data := t.TempDir()
			if srv.rsa {
				writeRSACert(t, filepath.Join(data, "tls"))
			}
			s := startServer(t, data)
			certPEM, err := os.ReadFile(filepath.Join(data, "tls", "cert.pem"))
			if err != nil {
				t.Fatal(err)
			}
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(certPEM)
			dial := func(cfg *tls.Config) (tls.ConnectionState, error) {
				cfg.RootCAs, cfg.ServerName = roots, "127.0.0.1"
				conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", s.https, cfg)
				if err != nil {
					return tls.ConnectionState{}, err
				}
				defer conn.Close()
				return conn.ConnectionState(), nil
			}
			var accepted []string
			for _, cs := range all {
				state, err := dial(&tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{cs.ID}})
				want := aead(cs.ID) && strings.Contains(cs.Name, srv.key)
				switch {
				case want && err != nil:
					t.Errorf("%s refused: %v", cs.Name, err)
				case want && (state.Version != tls.VersionTLS12 || state.CipherSuite != cs.ID):
					t.Errorf("%s: negotiated %s over %s", cs.Name, tls.CipherSuiteName(state.CipherSuite), tls.VersionName(state.Version))
				case !want && err == nil:
					t.Errorf("%s negotiated over TLS 1.2; only ECDHE with AES-GCM or ChaCha20-Poly1305 may be", cs.Name)
				case !want && !strings.Contains(err.Error(), "remote error: tls: handshake failure"):
					// The server refused it, not our client.
					t.Errorf("%s failed, but not as the server's refusal: %v", cs.Name, err)
				case want:
					accepted = append(accepted, cs.Name)
				}
			}
			if len(accepted) != 3 {
				t.Errorf("accepted over TLS 1.2: %v; want the three %s AEAD suites", accepted, strings.Trim(srv.key, "_"))
			}
			// TLS 1.3 is as before: Go's (all AEAD) suites, negotiated when offered.
			state, err := dial(&tls.Config{MinVersion: tls.VersionTLS12})
			if err != nil || state.Version != tls.VersionTLS13 {
				t.Errorf("default client: %s, %v; want TLS 1.3", tls.VersionName(state.Version), err)
			}
		})
	}
}

// writeRSACert writes a self-signed RSA certificate for 127.0.0.1 and its
// key, PEM-encoded, as dir/cert.pem and dir/key.pem.
func writeRSACert(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "settleflow RSA test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
}
