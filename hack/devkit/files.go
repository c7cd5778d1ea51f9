package devkit

import (
	"fmt"
	"os"
	"strings"
)

// RequireFiles checks that each environment variable of vars names an existing file, as a suite
// that runs binaries must before it starts: it must not pass by testing nothing. Its error names
// every variable that is unset or whose file cannot be read, then all of vars; a suite adds how
// to run it (the make target that builds the binaries and sets the variables).
func RequireFiles(vars ...string) error {
	var problems []string
	for _, v := range vars {
		path := os.Getenv(v)
		if path == "" {
			problems = append(problems, v+" is not set")
			continue
		}
		if _, err := os.Stat(path); err != nil {
			problems = append(problems, fmt.Sprintf("%s=%s: %v", v, path, err))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s (%s must name existing files)", strings.Join(problems, "; "), strings.Join(vars, ", "))
}
