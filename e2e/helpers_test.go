package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"text/template"
)

// renderConfig fills the collector config template testdata/<tmplName> with p and writes it
// to dir/config.yaml.
func renderConfig(t *testing.T, dir, tmplName string, p any) string {
	t.Helper()
	tmpl, err := template.ParseFiles(filepath.Join("testdata", tmplName))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, p); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
