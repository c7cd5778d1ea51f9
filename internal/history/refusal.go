package history

import (
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A deleted group's record may be refused by the API server. What the operator does then:
//   - a transient error (Transient) is retried without bound, as every write of the operator is:
//     the API server or the connection will come back;
//   - a refusal by the operator's own rights (RBAC) lets the group go at once: no retry gives the
//     operator a right, and the deletion would hang until an admin acted;
//   - any other refusal (a ResourceQuota on count/oaatgrouphistories.oaat.io used up, an admission
//     webhook or a ValidatingAdmissionPolicy denying the record, with whatever code it chooses) is
//     tried again for a bounded wait (RefusalWait), whose start the group keeps in its status, and
//     then the group goes without its record: an admin who frees the quota or fixes the policy
//     within the wait keeps the history, and the deletion never hangs for ever.

// DefaultRefusalWait is how long a group being deleted waits, by default, for the API server to
// accept its record once it refused it for good (--history-refusal-wait).
const DefaultRefusalWait = 15 * time.Minute

// RefusalRetry is how often the record is tried again during the wait.
const RefusalRetry = 30 * time.Second

// Reasons a group went without its record: the label reason of oaat_group_histories_lost_total.
const (
	// LostUnauthorized: the operator may not create OaatGroupHistories in the namespace.
	LostUnauthorized = "Unauthorized"
	// LostRefused: the API server refused the record for longer than the wait.
	LostRefused = "Refused"
)

// Transient reports whether an error writing the record may pass by itself: a server error or
// timeout (5xx), too many requests (429), a conflict (409), or an error without an API status (the
// connection failed). Every other error is a refusal for good: Forbidden, Invalid, BadRequest or
// any other code an admission webhook chooses.
func Transient(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return status.Status().Code >= 500 || apierrors.IsTooManyRequests(err) || apierrors.IsConflict(err) ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err)
}

// RefusalWaitOver says, for a record refused for good since `since` (when the refusals began, as
// the group's status keeps it; the zero time when they begin now), whether the wait is over at
// now, and otherwise how soon to try again: every RefusalRetry, and at the wait's end.
func RefusalWaitOver(since, now time.Time, wait time.Duration) (over bool, retryIn time.Duration) {
	if since.IsZero() || since.After(now) {
		since = now
	}
	left := since.Add(wait).Sub(now)
	if left <= 0 {
		return true, 0
	}
	return false, min(left, RefusalRetry)
}
