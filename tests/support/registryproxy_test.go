package support

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestRegistryProxyServesPublicNamesFromTheRegistry(t *testing.T) {
	var paths []string
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		_, _ = io.WriteString(w, "manifest of "+r.URL.Path)
	}))
	defer registry.Close()

	p, err := StartRegistryProxy(t.TempDir(), strings.TrimPrefix(registry.URL, "http://"), "quay.io")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	caPEM, err := os.ReadFile(p.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("no certificate in", p.CAFile)
	}
	proxyURL, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}

	for _, path := range []string{"/v2/", "/v2/org/repo/manifests/v1"} {
		resp, err := c.Get("https://quay.io" + path)
		if err != nil {
			t.Fatalf("GET %s through the proxy: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", path, resp.Status, body)
		}
	}
	want := []string{"/v2/", "/v2/quay.io/org/repo/manifests/v1"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("the registry got %v, want %v", paths, want)
	}

	if resp, err := c.Get("https://example.com/v2/"); err == nil {
		resp.Body.Close()
		t.Error("a host the proxy does not serve was proxied")
	}
}
