// Package readmetest gives tests the YAML examples of a README, so every README example is
// loaded by the code it documents.
package readmetest

import (
	"os"
	"regexp"
	"testing"

	"go.yaml.in/yaml/v3"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// Blocks returns the text of every ```yaml block of the file; it fails the test when the
// file has none.
func Blocks(t testing.TB, path string) []string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range yamlBlock.FindAllStringSubmatch(string(doc), -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatalf("%s has no yaml block", path)
	}
	return out
}

// Maps parses every yaml block of the file into a map.
func Maps(t testing.TB, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, b := range Blocks(t, path) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(b), &m); err != nil {
			t.Fatalf("%s: yaml block %d: %v", path, i, err)
		}
		out = append(out, m)
	}
	return out
}

// Block is one fenced block of a README: its info string (yaml, text, sh, ...) and text.
type Block struct{ Info, Text string }

var fencedBlock = regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```")

// Fenced returns every fenced block of the file in order, so a test can pair an example with
// the output shown after it; it fails the test when the file has none.
func Fenced(t testing.TB, path string) []Block {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Block
	for _, m := range fencedBlock.FindAllStringSubmatch(string(doc), -1) {
		out = append(out, Block{Info: m[1], Text: m[2]})
	}
	if len(out) == 0 {
		t.Fatalf("%s has no fenced block", path)
	}
	return out
}
