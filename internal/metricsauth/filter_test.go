package metricsauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// The reviewers' answers, as the API server gives them.
type authnAnswer struct {
	user user.Info
	err  error
}

func (a authnAnswer) AuthenticateRequest(*http.Request) (*authenticator.Response, bool, error) {
	if a.user == nil {
		return nil, false, a.err
	}
	return &authenticator.Response{User: a.user}, true, nil
}

type authzAnswer struct {
	decision authorizer.Decision
	err      error
}

func (a authzAnswer) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return a.decision, "", a.err
}

func TestGuard(t *testing.T) {
	reader := &user.DefaultInfo{Name: "system:serviceaccount:monitoring:prometheus"}
	tests := []struct {
		name  string
		authn authnAnswer
		authz authzAnswer
		want  int
	}{
		{name: "no or unknown token", authn: authnAnswer{}, want: http.StatusUnauthorized},
		{name: "token rejected with a reason", authn: authnAnswer{err: errors.New("invalid bearer token")}, want: http.StatusUnauthorized},
		{name: "user may not get /metrics", authn: authnAnswer{user: reader}, authz: authzAnswer{decision: authorizer.DecisionNoOpinion}, want: http.StatusForbidden},
		{name: "authorization undecided", authn: authnAnswer{user: reader}, authz: authzAnswer{err: errors.New("timeout")}, want: http.StatusInternalServerError},
		{name: "allowed", authn: authnAnswer{user: reader}, authz: authzAnswer{decision: authorizer.DecisionAllow}, want: http.StatusOK},
	}
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			guard(logr.Discard(), tt.authn, tt.authz, metrics).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", http.NoBody))
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d", rec.Code, tt.want)
			}
		})
	}
}
