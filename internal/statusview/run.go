package statusview

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// RunState says where an OaatRun stands in one line: "<phase> <reason>: <message> (pod <pod>, exit
// <code>)", each part only when set; "" before the operator has given it a phase. Two states that
// differ in any part are different lines, so a follower prints each change once.
func RunState(r *v1alpha1.OaatRun) string {
	st := r.Status
	if st.Phase == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(string(st.Phase))
	if st.Reason != "" {
		b.WriteString(" " + st.Reason)
	}
	if st.Message != "" {
		b.WriteString(": " + st.Message)
	}
	var details []string
	if st.PodName != "" {
		details = append(details, "pod "+st.PodName)
	}
	if st.ExitCode != nil {
		details = append(details, "exit "+strconv.Itoa(int(*st.ExitCode)))
	}
	if len(details) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(details, ", "))
	}
	return b.String()
}
