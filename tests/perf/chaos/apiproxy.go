package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// apiProxy stands between the replicas and kube-apiserver: each replica talks HTTPS to a listener
// of its own, with a kubeconfig that trusts the proxy's self-signed certificate and keeps the
// replica's own credentials (its bearer token passes through). Requests are forwarded unchanged,
// and responses streamed back (watches flush each chunk), except:
//   - a fraction of pod creations is faulted after the API server answered (see createFault);
//   - during a slow spell, pod watches lag (see watchLag);
//   - when armed for a replica, the proxy calls the armed function when that replica's status
//     write of a new run's intent has been answered, before the replica gets the answer.
type apiProxy struct {
	backend   *url.URL
	transport http.RoundTripper
	cert      selfSigned
	picker    *faultPicker
	lag       watchLag
	holder    leaseHolder
	errLog    *log.Logger

	mu       sync.Mutex
	servers  []*http.Server
	armed    map[string]func(group, pod string)
	creates  int                 // pod creations forwarded
	injected map[createFault]int // faulted creations, by fault
	existed  int                 // faulted creations that the API server had accepted
}

// newAPIProxy returns a proxy to the API server that kubeconfig names, trusting its CA.
func newAPIProxy(kubeconfig string, picker *faultPicker, errLog io.Writer) (*apiProxy, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	backend, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := rest.TLSConfigFor(&rest.Config{TLSClientConfig: cfg.TLSClientConfig})
	if err != nil {
		return nil, err
	}
	cert, err := newSelfSigned()
	if err != nil {
		return nil, err
	}
	return &apiProxy{
		backend: backend, cert: cert, picker: picker, errLog: log.New(errLog, "api-proxy ", log.LstdFlags),
		transport: &http.Transport{
			TLSClientConfig: tlsCfg, ForceAttemptHTTP2: true,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 5 * time.Second, MaxIdleConnsPerHost: 50, IdleConnTimeout: 90 * time.Second,
		},
		armed: map[string]func(string, string){}, injected: make(map[createFault]int),
	}, nil
}

// listen serves replica on a new loopback port and writes, next to kubeconfig's path with the
// replica's name, a copy of kubeconfig that points to it; it returns that copy's path.
func (p *apiProxy) listen(replica, kubeconfig, dir string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{
		Handler: p.handler(replica), TLSConfig: p.cert.serverTLS(), ErrorLog: p.errLog,
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			p.errLog.Printf("%s: %v", replica, err)
		}
	}()
	p.mu.Lock()
	p.servers = append(p.servers, srv)
	p.mu.Unlock()

	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", err
	}
	for _, cluster := range kc.Clusters {
		cluster.Server = "https://" + ln.Addr().String()
		cluster.CertificateAuthority = ""
		cluster.CertificateAuthorityData = p.cert.pem
		cluster.TLSServerName = ""
	}
	path := dir + "/" + replica + ".kubeconfig"
	return path, clientcmd.WriteToFile(*kc, path)
}

// close stops the listeners.
func (p *apiProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, srv := range p.servers {
		_ = srv.Close()
	}
}

// arm makes the proxy call fn, once, when replica's next status write of a new run's intent has
// been answered, before the replica receives the answer.
func (p *apiProxy) arm(replica string, fn func(group, pod string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed[replica] = fn
}

// disarm cancels arm.
func (p *apiProxy) disarm(replica string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.armed, replica)
}

// faultKey carries a request's createFault from the handler to the response's modification.
type faultKey struct{}

// sentKey carries the instant a request reached the proxy.
type sentKey struct{}

// errInjectedReset makes the error handler abort the response.
var errInjectedReset = errors.New("injected reset")

func (p *apiProxy) handler(replica string) http.Handler {
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(p.backend)
			r.Out.Host = p.backend.Host
		},
		Transport:     p.transport,
		FlushInterval: -1,
		ErrorLog:      p.errLog,
		ModifyResponse: func(resp *http.Response) error {
			return p.modify(replica, resp)
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, errInjectedReset) {
				panic(http.ErrAbortHandler) // resets the stream (HTTP/2) or the connection
			}
			if r.Context().Err() == nil {
				p.errLog.Printf("%s %s %s: %v", replica, r.Method, r.URL.Path, err)
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), sentKey{}, time.Now()))
		if classify(r) == podCreate {
			f := p.picker.pick()
			p.mu.Lock()
			p.creates++
			p.mu.Unlock()
			r = r.WithContext(context.WithValue(r.Context(), faultKey{}, f))
		}
		rp.ServeHTTP(w, r)
	})
}

// modify applies the faults to the API server's response to a replica's request.
func (p *apiProxy) modify(replica string, resp *http.Response) error {
	sent, _ := resp.Request.Context().Value(sentKey{}).(time.Time)
	switch classify(resp.Request) {
	case leaseWrite:
		return p.leaseWritten(replica, resp)
	case podCreate:
		if resp.StatusCode == http.StatusCreated {
			p.holder.acted(replica, sent, actCreate)
		}
		f, _ := resp.Request.Context().Value(faultKey{}).(createFault)
		if f == noFault {
			return nil
		}
		p.mu.Lock()
		p.injected[f]++
		if resp.StatusCode == http.StatusCreated {
			p.existed++
		}
		p.mu.Unlock()
		switch f {
		case faultTimeout:
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			gatewayTimeout(resp)
		case faultReset:
			_, _ = io.Copy(io.Discard, resp.Body)
			return errInjectedReset
		case faultSlow:
			time.Sleep(p.picker.lateBy())
		case noFault: // returned above
		}
	case podWatch:
		resp.Body = newLaggedBody(resp.Body, p.lag.get)
	case groupStatusWrite:
		if resp.StatusCode == http.StatusOK {
			p.holder.acted(replica, sent, actStatus)
		}
		return p.maybeFire(replica, resp)
	case passThrough:
	}
	return nil
}

// maybeFire calls the function armed for replica if resp answers a status write of a new run's
// intent.
func (p *apiProxy) maybeFire(replica string, resp *http.Response) error {
	p.mu.Lock()
	fn := p.armed[replica]
	p.mu.Unlock()
	if fn == nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	plain, err := peekBody(resp)
	if err != nil {
		return err
	}
	group, pod, ok := freshIntent(plain, time.Now())
	if !ok {
		return nil
	}
	p.mu.Lock()
	if p.armed[replica] == nil { // another write fired it meanwhile
		p.mu.Unlock()
		return nil
	}
	delete(p.armed, replica)
	p.mu.Unlock()
	fn(group, pod)
	return nil
}

// peekBody reads resp's body, leaves it for the replica as it came, and returns it decompressed.
func peekBody(resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
		return body, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// gatewayTimeout turns resp into the 504 an API server answers when a request outlives its
// deadline: a Status of reason Timeout, without Retry-After, so that client-go does not retry.
func gatewayTimeout(resp *http.Response) {
	body := []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
		`"message":"Timeout: request did not complete within the allowed duration (injected by the chaos run's API proxy)",` +
		`"reason":"` + string(metav1.StatusReasonTimeout) + `","code":504}`)
	resp.StatusCode = http.StatusGatewayTimeout
	resp.Status = strconv.Itoa(http.StatusGatewayTimeout) + " " + http.StatusText(http.StatusGatewayTimeout)
	resp.Header = http.Header{"Content-Type": {"application/json"}}
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Body = io.NopCloser(bytes.NewReader(body))
}

// injectedSummary describes the faults injected so far.
func (p *apiProxy) injectedSummary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	total := 0
	for _, n := range p.injected {
		total += n
	}
	return fmt.Sprintf("pod creations through the proxy: %d; faulted after forwarding: %d (%d answered 504, %d reset, %d answered late), of which the API server had created the pod: %d",
		p.creates, total, p.injected[faultTimeout], p.injected[faultReset], p.injected[faultSlow], p.existed)
}
