// Package metricsauth protects the metrics endpoint the way kube-apiserver and kube-rbac-proxy
// protect theirs: the bearer token must authenticate (TokenReview) and its user must be allowed
// to get the path (SubjectAccessReview).
//
// controller-runtime's own filter answers 500 when the TokenReview rejects a token with a reason
// (an unreadable token, the token of a deleted ServiceAccount), and logs an error with a stack
// for each such request; a scraper with a revoked token then looks like a broken server, and
// anyone who reaches the port can fill the log. Here any token that does not authenticate gets
// 401, logged at debug level.
package metricsauth

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Cache lifetimes of review answers, and the retries of a review that could not be made: those of
// kube-apiserver's delegated authentication and authorization.
var (
	authnCacheTTL = time.Minute
	allowCacheTTL = 5 * time.Minute
	denyCacheTTL  = 30 * time.Second
	reviewTimeout = 10 * time.Second
	reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
)

// Filter is a metrics server filter provider (metricsserver.Options.FilterProvider).
func Filter(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, authz, err := reviewers(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return guard(log, authn, authz, next), nil
	}, nil
}

func reviewers(cfg *rest.Config, httpClient *http.Client) (authenticator.Request, authorizer.Authorizer, error) {
	tokenReviews, err := authenticationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, nil, err
	}
	accessReviews, err := authorizationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, nil, err
	}
	backoff := reviewBackoff
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 authnCacheTTL,
		TokenAccessReviewClient:  tokenReviews,
		TokenAccessReviewTimeout: reviewTimeout,
		WebhookRetryBackoff:      &backoff,
	}.New()
	if err != nil {
		return nil, nil, fmt.Errorf("creating the token authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: accessReviews,
		AllowCacheTTL:             allowCacheTTL,
		DenyCacheTTL:              denyCacheTTL,
		WebhookRetryBackoff:       &backoff,
	}.New()
	if err != nil {
		return nil, nil, fmt.Errorf("creating the access authorizer: %w", err)
	}
	return authn, authz, nil
}

// accessReviewer is the part of authorizer.Authorizer that guard uses.
type accessReviewer interface {
	Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error)
}

// guard serves next to requests that authenticate and are authorized: 401 for a token that does
// not authenticate, 403 for a user who may not get the path, 500 when authorization could not
// be decided.
func guard(log logr.Logger, authn authenticator.Request, authz accessReviewer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		res, ok, err := authn.AuthenticateRequest(req)
		if err != nil || !ok {
			log.V(4).Info("Refused a metrics request that did not authenticate", "reason", err)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		attrs := authorizer.AttributesRecord{User: res.User, Verb: strings.ToLower(req.Method), Path: req.URL.Path}
		decision, reason, err := authz.Authorize(req.Context(), attrs)
		if err != nil {
			log.Error(err, "Cannot authorize a metrics request", "user", res.User.GetName())
			http.Error(w, "Authorization failed", http.StatusInternalServerError)
			return
		}
		if decision != authorizer.DecisionAllow {
			log.V(4).Info("Refused a metrics request", "user", res.User.GetName(), "reason", reason)
			http.Error(w, fmt.Sprintf("Forbidden: user %s may not get %s", res.User.GetName(), req.URL.Path), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, req)
	})
}
