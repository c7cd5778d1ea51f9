package devkit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// CheckReady asks url (a readiness endpoint such as /readyz) and returns an error unless it
// answers 200 OK within timeout; the error holds the body of another answer.
func CheckReady(ctx context.Context, url string, timeout time.Duration) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return err
	}
	c := http.Client{Timeout: timeout}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	return nil
}
