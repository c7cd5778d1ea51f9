package support

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// RegistryProxy is an HTTPS proxy that answers for public registries from the local cluster's
// registry, the way a TLS-inspecting proxy with its own certificate authority answers a user's
// tools on a network without a route to the internet: a tool run with Env() in its environment
// (HTTPS_PROXY, SSL_CERT_FILE, which Go programs honour) pulls quay.io/org/repo:tag by its public
// name. A CONNECT to HOST:443, HOST one of the proxy's hosts, is answered with TLS under a
// certificate for HOST that the proxy's CA signs; the registry API requests in that tunnel (/v2/)
// go to http://REGISTRY/v2/HOST/..., the layout in which hack/images/push.sh stores every image.
// Any other host is refused.
type RegistryProxy struct {
	// URL is the proxy's address (http://127.0.0.1:PORT).
	URL string
	// CAFile holds the certificate of the proxy's CA, PEM.
	CAFile string

	hosts    []string
	registry string
	ca       *x509.Certificate
	caKey    *ecdsa.PrivateKey
	server   *http.Server
	listener net.Listener

	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

// StartRegistryProxy starts a RegistryProxy for hosts in front of registry (host:port, plain
// HTTP), its CA certificate written into dir.
func StartRegistryProxy(dir, registry string, hosts ...string) (*RegistryProxy, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "oaat test registry proxy CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	caFile := filepath.Join(dir, "registry-proxy-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &RegistryProxy{
		URL: "http://" + l.Addr().String(), CAFile: caFile,
		hosts: hosts, registry: registry, ca: ca, caKey: key, listener: l,
		certs: map[string]*tls.Certificate{},
	}
	p.server = &http.Server{Handler: http.HandlerFunc(p.connect), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// Env is the environment that sends a Go program's HTTPS requests through the proxy and makes
// it trust the proxy's CA (instead of the system's). Requests to loopback addresses, such as the
// local cluster's API server, are never proxied.
func (p *RegistryProxy) Env() []string {
	return []string{"HTTPS_PROXY=" + p.URL, "https_proxy=" + p.URL, "SSL_CERT_FILE=" + p.CAFile}
}

// Close stops the proxy and its tunnels.
func (p *RegistryProxy) Close() error {
	return p.server.Close()
}

// connect answers a CONNECT to one of the proxy's hosts on port 443 with a TLS tunnel whose
// requests it serves from the registry.
func (p *RegistryProxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if r.Method != http.MethodConnect || err != nil || port != "443" || !slices.Contains(p.hosts, host) {
		http.Error(w, fmt.Sprintf("this proxy serves only CONNECT to %v on port 443, not %s %s", p.hosts, r.Method, r.Host), http.StatusForbidden)
		return
	}
	cert, err := p.certFor(host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "cannot hijack the connection", http.StatusInternalServerError)
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := rw.WriteString("HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil || rw.Flush() != nil {
		_ = conn.Close()
		return
	}
	tlsConn := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
	tunnel := &http.Server{Handler: p.registryHandler(host), ReadHeaderTimeout: 10 * time.Second}
	_ = tunnel.Serve(&oneConnListener{conn: tlsConn})
}

// registryHandler serves the registry API of host from the registry, under /v2/host/.
func (p *RegistryProxy) registryHandler(host string) http.Handler {
	return &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Scheme = "http"
		pr.Out.URL.Host = p.registry
		pr.Out.Host = p.registry
		if rest, ok := strings.CutPrefix(pr.In.URL.Path, "/v2/"); ok && rest != "" {
			pr.Out.URL.Path = "/v2/" + host + "/" + rest
			pr.Out.URL.RawPath = ""
		}
	}}
}

// certFor returns a certificate for host signed by the proxy's CA, made at the first use.
func (p *RegistryProxy) certFor(host string) (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.certs[host]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(len(p.certs) + 2)),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	p.certs[host] = c
	return c, nil
}

// oneConnListener is a net.Listener that accepts one connection, then reports itself closed
// once that connection is: http.Server.Serve then returns.
type oneConnListener struct {
	conn net.Conn
	once sync.Once
	done chan struct{}
	mu   sync.Mutex
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.done == nil {
		l.done = make(chan struct{})
	}
	done := l.done
	var c net.Conn
	l.once.Do(func() { c = &notifyCloseConn{Conn: l.conn, closed: done} })
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	<-done
	return nil, errors.New("the tunnel is closed")
}

func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

// notifyCloseConn closes its channel when the connection is closed.
type notifyCloseConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *notifyCloseConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.closed) })
	return err
}
