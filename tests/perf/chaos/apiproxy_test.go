package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func testProxy() *apiProxy {
	return &apiProxy{
		picker: &faultPicker{rng: rand.New(rand.NewPCG(1, 1))},
		armed:  map[string]func(string, string){}, injected: make(map[createFault]int),
	}
}

// answer is the API server's response to req, as the reverse proxy hands it to modify.
func answer(req *http.Request, code int, body string) *http.Response {
	return &http.Response{
		StatusCode: code, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req,
	}
}

func createRequest(f createFault) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/chaos/pods", http.NoBody)
	return req.WithContext(context.WithValue(req.Context(), faultKey{}, f))
}

func TestModifyPodCreate(t *testing.T) {
	p := testProxy()

	resp := answer(createRequest(faultTimeout), http.StatusCreated, `{"kind":"Pod"}`)
	if err := p.modify("r", resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get("Retry-After") != "" {
		t.Errorf("timeout fault: %d, Retry-After %q; want 504 without Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	var status metav1.Status
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &status); err != nil {
		t.Fatal(err)
	}
	if err := (&apierrors.StatusError{ErrStatus: status}); !apierrors.IsTimeout(err) {
		t.Errorf("the 504's Status is no Timeout: %v", err)
	}

	if err := p.modify("r", answer(createRequest(faultReset), http.StatusCreated, `{}`)); !errors.Is(err, errInjectedReset) {
		t.Errorf("reset fault: %v, want errInjectedReset", err)
	}

	refused := answer(createRequest(faultReset), http.StatusUnprocessableEntity, `{}`)
	if err := p.modify("r", refused); !errors.Is(err, errInjectedReset) {
		t.Errorf("reset fault on a refusal: %v, want errInjectedReset", err)
	}

	clean := answer(createRequest(noFault), http.StatusCreated, `{"kind":"Pod"}`)
	if err := p.modify("r", clean); err != nil || clean.StatusCode != http.StatusCreated {
		t.Errorf("no fault: %v, %d", err, clean.StatusCode)
	}

	if p.injected[faultTimeout] != 1 || p.injected[faultReset] != 2 || p.existed != 2 {
		t.Errorf("counted %v, %d existed; want 1 timeout, 2 resets, 2 existed", p.injected, p.existed)
	}
}

func statusWrite(t *testing.T, startedAt time.Time) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPut, "/apis/oaat.io/v1alpha1/namespaces/chaos/oaatgroups/g-3/status", http.NoBody)
	body := groupJSON(t, &v1alpha1.CurrentRun{Item: "a", PodName: "g-3-a-7", StartedAt: metav1.NewTime(startedAt)})
	return answer(req, http.StatusOK, string(body))
}

func TestArmedPauseFiresOnceOnAnIntent(t *testing.T) {
	p := testProxy()
	var fired []string
	if err := p.modify("r0", statusWrite(t, time.Now())); err != nil { // not armed
		t.Fatal(err)
	}
	p.arm("r0", func(group, pod string) { fired = append(fired, group+"/"+pod) })
	for _, resp := range []*http.Response{
		statusWrite(t, time.Now().Add(-time.Minute)), // a write during a run: no intent
	} {
		if err := p.modify("r0", resp); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.modify("r1", statusWrite(t, time.Now())); err != nil { // another replica
		t.Fatal(err)
	}
	if len(fired) != 0 {
		t.Fatalf("fired on %v before r0 wrote an intent", fired)
	}
	resp := statusWrite(t, time.Now())
	want, _ := io.ReadAll(statusWrite(t, time.Now()).Body)
	if err := p.modify("r0", resp); err != nil {
		t.Fatal(err)
	}
	if err := p.modify("r0", statusWrite(t, time.Now())); err != nil {
		t.Fatal(err)
	}
	if len(fired) != 1 || fired[0] != "g-3/g-3-a-7" {
		t.Errorf("fired %v, want once for g-3/g-3-a-7", fired)
	}
	if got, _ := io.ReadAll(resp.Body); !bytes.Equal(got, want) {
		t.Errorf("the replica gets %q, want the API server's answer %q", got, want)
	}
}

func TestGatewayTimeoutDecodes(t *testing.T) {
	resp := answer(nil, http.StatusCreated, "")
	gatewayTimeout(resp)
	if resp.ContentLength <= 0 || resp.Header.Get("Content-Length") == "" {
		t.Errorf("no content length: %d %q", resp.ContentLength, resp.Header.Get("Content-Length"))
	}
}
