package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// debianTemplatesDir is where Debian's zabbix-frontend-php installs the
// official Zabbix 6.0 templates (298 YAML files): the conformance corpus.
const debianTemplatesDir = "/usr/share/doc/zabbix-frontend-php/templates"

// ZabbixTemplates returns the directory holding the official Zabbix 6.0
// templates: $ZABBIX_TEMPLATES_DIR when set (.ci/run extracts the package
// there without installing PHP), else Debian's install path. The test is
// skipped when neither exists, and fails under CI.
func ZabbixTemplates(t testing.TB) string {
	t.Helper()
	for _, dir := range []string{os.Getenv("ZABBIX_TEMPLATES_DIR"), debianTemplatesDir} {
		if dir == "" {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.yaml")); len(m) > 0 {
			return dir
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("the Zabbix templates are missing under CI: .ci/run must extract zabbix-frontend-php and set ZABBIX_TEMPLATES_DIR")
	}
	t.Skipf("the Zabbix templates are not installed (apt-get download zabbix-frontend-php && dpkg -x it, then set ZABBIX_TEMPLATES_DIR to its usr/share/doc/zabbix-frontend-php/templates)")
	return ""
}
