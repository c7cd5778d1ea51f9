package admission

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// cronTokens are put, one at a time, in each field of "0 0 * * *": values in and out of each
// field's range, leading zeros, numbers too large for any integer, names in every case, the
// robfig quirks (a hyphen after * is ignored, empty list elements are dropped) and syntax errors.
var cronTokens = []string{
	"*", "?", "0", "00", "1", "5", "6", "7", "12", "13", "23", "24", "29", "30", "31", "32", "59", "60", "61",
	"0060", "007", "000000000000000000000000000005", "99999999999999999999", "-1",
	"jan", "JAN", "Feb", "dec", "january", "sun", "SAT", "Mon", "mon-fri", "fri-mon", "jan-mar", "mar-jan", "feb/3", "sun-sat",
	"*/0", "*/1", "*/01", "*/2", "*/7", "*/59", "*/60", "*/100", "*/9223372036854775807", "*/9223372036854775808",
	"*/00009223372036854775807", "*/18446744073709551616", "?/5", "*/jan",
	"5-1", "1-5", "1-1", "0-59", "0-60", "1-31", "0-6", "0-7", "1-12", "1-5/2", "5/2", "5/0", "1-5/0", "31/5",
	"*-5", "?-x", "*-/5", "*-5-7/2", "1-2-3", "1//2", "1/2/3", "/5", "5/", "-5", "5-",
	",", ",,", ",5", "5,", "1,,2", "1,5-7,*/3", "a", "*a", "**", "L", "1W", "??",
}

// cronTable are the hand-picked schedules, sent to every server whole.
var cronTable = []string{
	"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly",
	"@every 1h", "@reboot", "@Daily", "@daily ", " @daily", "@", "@daily 0",
	"0 1 * * *", "*/15 2-4 1,15 Jan-Jun Mon-Fri", "61 * * * *", "0 24 * * *", "0 0 0 * *", "0 0 * 13 *", "0 0 * * 7",
	"CRON_TZ=UTC 0 0 * * *", "TZ=Europe/Berlin 0 0 * * *", "CRON_TZ=Mars/Olympus 0 0 * * *",
	" 0 0 * * *", "0 0 * * * ", "0  0 * * *", "0\t0 * * * *", "0 0 * *", "0 0 * * * *", "0 0 0 * * * *", "", " ",
	"0 0 * * " + strings.Repeat("1,", 60),       // 128 characters, the longest schedule
	"0 0 * * " + strings.Repeat("1,", 60) + "1", // 129
}

// cronCorpus is every string the differential test sends: a table, each token of cronTokens in
// each field, the combinations of day-of-month, month and day-of-week that decide whether an
// expression matches any date, and random expressions (a fixed seed).
func cronCorpus() []string {
	corpus := slices.Clone(cronTable)
	for _, token := range cronTokens {
		for i := range 5 {
			fields := []string{"0", "0", "*", "*", "*"}
			fields[i] = token
			corpus = append(corpus, strings.Join(fields, " "))
		}
	}
	for _, dom := range []string{"28", "29", "30", "31", "30-31", "31/5", "29,31", "*", ","} {
		for _, month := range []string{"2", "feb", "4", "2,4", "4-6/2", "*/2", "2/13", "11", "*", ",", "4,6,9,11", "apr-jun/2"} {
			for _, dow := range []string{"*", "1", "*,1", ",", "*/2", "?/01"} {
				corpus = append(corpus, fmt.Sprintf("0 0 %s %s %s", dom, month, dow))
			}
		}
	}
	r := rand.New(rand.NewPCG(40, 3))
	for range 200 {
		fields := make([]string, 5)
		for i := range fields {
			fields[i] = randomField(r)
		}
		corpus = append(corpus, strings.Join(fields, " "))
	}
	return dedupe(corpus)
}

// randomField is a list of one to three random parts: *, ?, a value, a range or a name, with or
// without a step, values from -1 to 65.
func randomField(r *rand.Rand) string {
	names := []string{"jan", "FEB", "dec", "sun", "Sat", "mon", "xyz"}
	value := func() string {
		if r.IntN(5) == 0 {
			return names[r.IntN(len(names))]
		}
		return fmt.Sprint(r.IntN(67) - 1)
	}
	parts := make([]string, 1+r.IntN(3))
	for i := range parts {
		var head string
		switch r.IntN(4) {
		case 0:
			head = []string{"*", "?"}[r.IntN(2)]
		case 1:
			head = value()
		default:
			head = value() + "-" + value()
		}
		if r.IntN(3) == 0 {
			head += "/" + fmt.Sprint(r.IntN(70))
		}
		parts[i] = head
	}
	return strings.Join(parts, ",")
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// testCronCorpus sends the strings of the corpus as spec.schedule to the API server and to the
// operator's parser (internal/schedule.ParseCalendar): both must accept it or both refuse it.
// With sample n, it sends cronTable and every n-th of the other strings.
func testCronCorpus(t *testing.T, c client.Client, sample int) {
	t.Helper()
	var corpus []string
	for i, s := range cronCorpus() {
		if i < len(cronTable) || i%sample == 0 {
			corpus = append(corpus, s)
		}
	}
	refusals := make([]error, len(corpus))
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				refusals[i] = dryRun(t.Context(), c, group(fmt.Sprintf("cron-%d", i), map[string]any{"schedule": corpus[i]}))
			}
		})
	}
	for i := range corpus {
		work <- i
	}
	close(work)
	wg.Wait()

	agree, accepted := 0, 0 // accepted by both
	for i, s := range corpus {
		admitted, err := answer(refusals[i])
		if err != nil {
			t.Fatalf("schedule %q: %v", s, err)
		}
		_, parseErr := schedule.ParseCalendar(s, "", 0, "corpus")
		switch {
		case admitted != (parseErr == nil):
			t.Errorf("schedule %q: admission accepted=%v (%v), the operator's parser accepted=%v (%v)", s, admitted, refusals[i], parseErr == nil, parseErr)
		case !admitted && !strings.Contains(refusals[i].Error(), "spec.schedule"):
			t.Errorf("schedule %q: the refusal does not name spec.schedule: %v", s, refusals[i])
		default:
			agree++
			if admitted {
				accepted++
			}
		}
	}
	t.Logf("%d schedules: %d agree (%d accepted by both, %d refused by both), %d disagree", len(corpus), agree, accepted, agree-accepted, len(corpus)-agree)
}

// answer is whether the API server accepted a dry-run create that returned err; an error other
// than a refusal of the object (Invalid) is returned.
func answer(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsInvalid(err):
		return false, nil
	default:
		return false, err
	}
}
