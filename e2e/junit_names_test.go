package e2e

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// junitReport is what TestJUnitNamesStableAcrossRuns reads of a JUnit report.
type junitReport struct {
	Suites []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Time      string `xml:"time,attr"`
			Timestamp string `xml:"timestamp,attr"`
			SystemOut string `xml:"system-out"`
			Failure   *struct {
				Body string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Body string `xml:",chardata"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

var (
	anyID     = regexp.MustCompile(`[0-9a-f]{16}`)
	bodyTrace = regexp.MustCompile(`trace: ([0-9a-f]{32})`)
)

// TestJUnitNamesStableAcrossRuns: two `handoffcheck run`s of the same real-client scenario
// (the Strands refund swarm twice, then the Vercel AI SDK pair of linked traces), each
// with new trace and span ids, give the same JUnit testcase names in the same order: the
// names hold the step and the root agent, never an id, so a CI's test history follows each
// assertion from run to run. The ids are in the testcase bodies, and every testcase has a
// time and a timestamp.
func TestJUnitNamesStableAcrossRuns(t *testing.T) {
	node := requireClients(t)
	dir := t.TempDir()
	params := newConfigParams(t, dir)
	cfgPath := renderConfig(t, dir, "scenarios.yaml.tmpl", params)
	env := clientEnv()
	refund, async := filepath.Join(clientsDir, "strands-refund-swarm.mjs"), filepath.Join(clientsDir, "vercel-async-link.mjs")
	script := fmt.Sprintf("%q %q && %q %q && %q %q", node, refund, node, refund, node, async)

	var names [2][]string
	var traces [2]map[string]bool
	for i := range 2 {
		path := filepath.Join(dir, fmt.Sprintf("run%d.junit.xml", i))
		code, stdout, stderr := runCheck(t, env, "run", "--config", cfgPath, "--junit", path, "--", "sh", "-c", script)
		if code != 1 {
			t.Fatalf("handoffcheck run %d: exit %d, want 1 (the scenarios' leak cases fail)\n%s%s", i, code, stdout, stderr)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rep junitReport
		if err := xml.Unmarshal(raw, &rep); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		traces[i] = map[string]bool{}
		for _, s := range rep.Suites {
			inSuite := map[string]bool{}
			for _, c := range s.Cases {
				names[i] = append(names[i], s.Name+": "+c.Name)
				if anyID.MatchString(c.Name) {
					t.Errorf("run %d: testcase name holds an id: %q", i, c.Name)
				}
				if inSuite[c.Name] {
					t.Errorf("run %d: two testcases of suite %s are named %q", i, s.Name, c.Name)
				}
				inSuite[c.Name] = true
				body := c.SystemOut
				if c.Failure != nil {
					body = c.Failure.Body
				}
				if c.Error != nil {
					body = c.Error.Body
				}
				m := bodyTrace.FindStringSubmatch(body)
				if m == nil {
					t.Errorf("run %d: testcase %q does not name its trace in its body: %q", i, c.Name, body)
				} else {
					traces[i][m[1]] = true
				}
				if _, err := time.Parse(time.RFC3339Nano, c.Timestamp); err != nil || c.Time == "" {
					t.Errorf("run %d: testcase %q: time %q, timestamp %q (%v)", i, c.Name, c.Time, c.Timestamp, err)
				}
			}
		}
	}
	if len(names[0]) == 0 {
		t.Fatal("the JUnit report has no testcase")
	}
	if a, b := strings.Join(names[0], "\n"), strings.Join(names[1], "\n"); a != b {
		t.Errorf("two runs of the same scenario name their testcases differently:\nfirst:\n%s\nsecond:\n%s", a, b)
	}
	for id := range traces[0] {
		if traces[1][id] {
			t.Errorf("trace %s in both runs: the scenario was not run anew", id)
		}
	}
	// The refund swarm ran twice in a run: its two traces, both rooted at triage, are
	// numbered in the order they started.
	all := strings.Join(names[0], "\n")
	for _, want := range []string{"[root triage, trace 1]", "[root triage, trace 2]", "[root intake]"} {
		if !strings.Contains(all, want) {
			t.Errorf("no testcase named with %q:\n%s", want, all)
		}
	}
}
