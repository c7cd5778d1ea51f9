package notify

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TokenKey is the key of the sink's Secret that holds its bearer token.
const TokenKey = "token"

// tokenTTL is how long a token read is used before the Secret is read again, so that a rotated
// token is taken within a minute without a read per delivery (the operator does not watch
// Secrets: it may read this one alone).
const tokenTTL = time.Minute

// SecretToken reads the cluster-wide sink's bearer token from a Secret, from the API server (not
// a cache: the operator holds only get on this one Secret).
type SecretToken struct {
	reader client.Reader
	key    client.ObjectKey

	mu     sync.Mutex
	token  string
	readAt time.Time
}

// NewSecretToken reads the token from the Secret key names.
func NewSecretToken(reader client.Reader, key client.ObjectKey) *SecretToken {
	return &SecretToken{reader: reader, key: key}
}

// Get is the token: empty when the Secret does not exist (the sink takes no token).
func (s *SecretToken) Get(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.readAt.IsZero() && time.Since(s.readAt) < tokenTTL {
		return s.token, nil
	}
	secret := &corev1.Secret{}
	switch err := s.reader.Get(ctx, s.key, secret); {
	case apierrors.IsNotFound(err):
		s.token = ""
	case err != nil:
		return "", fmt.Errorf("reading Secret %s: %w", s.key, err)
	default:
		s.token = string(secret.Data[TokenKey])
	}
	s.readAt = time.Now()
	return s.token, nil
}
