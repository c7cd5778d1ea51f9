package devkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRequireFiles(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	if err := os.WriteFile(present, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SUPPORT_TEST_PRESENT", present)
	t.Setenv("SUPPORT_TEST_MISSING", filepath.Join(dir, "missing"))
	t.Setenv("SUPPORT_TEST_UNSET", "")

	if err := RequireFiles("SUPPORT_TEST_PRESENT"); err != nil {
		t.Errorf("RequireFiles of an existing file: %v", err)
	}
	if err := RequireFiles(); err != nil {
		t.Errorf("RequireFiles(): %v", err)
	}

	err := RequireFiles("SUPPORT_TEST_UNSET", "SUPPORT_TEST_PRESENT", "SUPPORT_TEST_MISSING")
	if err == nil {
		t.Fatal("RequireFiles with an unset variable and a missing file: no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"SUPPORT_TEST_UNSET is not set; ",
		"SUPPORT_TEST_MISSING=" + filepath.Join(dir, "missing") + ": ",
		"(SUPPORT_TEST_UNSET, SUPPORT_TEST_PRESENT, SUPPORT_TEST_MISSING must name existing files)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "SUPPORT_TEST_PRESENT=") {
		t.Errorf("error %q names the variable whose file exists as a problem", msg)
	}
}
